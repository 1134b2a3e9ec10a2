import StopwatchProtocol
import StopwatchdClient
import Varlink

/// What `swctl` says of a name no stopwatch has (`NoSuchStopwatch`, or a `wait` for a stop
/// on a name never created): the daemon's refusal, and, when a created name is close to it,
/// "did you mean". The names come from one `List`, asked only on this error's path.
enum MissingStopwatch {
    /// The line for `name`; `listed`: the created stopwatches' names, nil when `List` failed
    /// (then the line has no suggestion).
    static func message(_ name: String, listed: [String]?) -> String {
        let refusal = ClientError(refusal: .noSuchStopwatch(name))
        guard let close = listed.flatMap({ closest(to: name, among: $0) }) else { return "swctl: \(refusal)" }
        return "swctl: \(refusal); did you mean '\(StopwatchName.printable(close))'?"
    }

    /// The created name closest to `name`, when it is close: the same but for case, or, case
    /// aside, at most 2 edits away (a letter added, dropped, changed, or two swapped), 1 for
    /// a name of 3 or 4 characters and none for a shorter one, to which an edit or two makes
    /// nearly anything else. The first in `names`' order wins a tie: `List` sorts them.
    static func closest(to name: String, among names: [String]) -> String? {
        let folded = Array(name.lowercased().unicodeScalars)
        let allowed = folded.count <= 2 ? 0 : folded.count <= 4 ? 1 : 2
        var best: (name: String, distance: Int)?
        for candidate in names where !candidate.utf8.elementsEqual(name.utf8) {
            let distance = editDistance(folded, Array(candidate.lowercased().unicodeScalars), atMost: allowed)
            if distance <= allowed, distance < (best?.distance ?? .max) { best = (candidate, distance) }
        }
        return best?.name
    }

    /// The edits from `a` to `b`, scalar by scalar: Levenshtein's, with two neighbours swapped
    /// as one edit (the commonest typo: `tae` for `tea`). Any value over `limit` once it is
    /// sure to be over, so that a name of 64 scalars against hundreds of names stays cheap.
    static func editDistance(_ a: [Unicode.Scalar], _ b: [Unicode.Scalar], atMost limit: Int) -> Int {
        guard abs(a.count - b.count) <= limit else { return limit + 1 }
        // Rows i - 2, i - 1 and i of the table: edits from a's first i scalars to b's first j.
        var beforePrevious: [Int] = []
        var previous = Array(0...b.count)
        var current = previous
        for i in a.indices {
            current[0] = i + 1
            for j in b.indices {
                var edits = min(previous[j] + (a[i] == b[j] ? 0 : 1), previous[j + 1] + 1, current[j] + 1)
                if i > 0, j > 0, a[i] == b[j - 1], a[i - 1] == b[j] { edits = min(edits, beforePrevious[j - 1] + 1) }
                current[j + 1] = edits
            }
            // No later row can come back under the limit once a whole row is over it.
            if current.allSatisfy({ $0 > limit }) { return limit + 1 }
            (beforePrevious, previous) = (previous, current)
        }
        return previous[b.count]
    }
}
