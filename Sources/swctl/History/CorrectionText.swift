import StopwatchProtocol
import StopwatchdClient

/// What `swctl undo` and `@N` say in words.
package enum CorrectionText {
    /// `undo`: what was taken back, and the interval as it is now (gone again after the undo
    /// of a track, back after the undo of a delete).
    package static func undone(_ correction: Correction, _ interval: Interval) -> String {
        switch correction {
        case .track: "undid a track; removed \(LogText.line(interval))"
        case .amend: "undid an amend; now \(LogText.line(interval))"
        case .delete: "undid a delete; restored \(LogText.line(interval))"
        }
    }

    /// `@N` beyond the history.
    package static func tooFew(_ count: Int, ended: Int) -> String {
        switch ended {
        case 0: "there is no interval @\(count): the history has no ended interval yet"
        case 1: "there is no interval @\(count): the history has 1 ended interval, @1 (see 'swctl log')"
        default: "there is no interval @\(count): the history has \(ended) ended intervals, @1 to @\(ended) (see 'swctl log')"
        }
    }
}
