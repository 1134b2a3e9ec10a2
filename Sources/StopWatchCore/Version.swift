/// What `--version` and `GetInfo` report.
public enum Version {
    public static let number = "0.1.0"
    public static let vendor = "stopwatchd"
    public static let url = "https://github.com/stopwatchd/stopwatchd"
}
