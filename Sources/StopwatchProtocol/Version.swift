/// What `--version` and `GetInfo` report.
package enum Version {
    package static let number = "0.1.0"
    package static let vendor = "stopwatchd"
    package static let url = "https://github.com/stopwatchd/stopwatchd"
}
