import Glibc
import LinuxSystem
import Varlink

/// The figures as JSON, for `--json FILE`: what the table shows, plus the counts behind it.
enum JSONReport {
    static func json(_ figures: [Figure], plan: BenchPlan, startedWall: Duration) -> JSONValue {
        .object([
            "swbench": .int(1),
            "mode": .string(plan.isSmoke ? "smoke" : "full"),
            "started": .string(FileSystem.timestamp(wall: startedWall)),
            "cores": .int(Int64(sysconf(CInt(_SC_NPROCESSORS_ONLN)))),
            "figures": .array(figures.map(json)),
        ])
    }

    private static func json(_ figure: Figure) -> JSONValue {
        var object: JSONObject = [
            "id": .string(figure.kind.rawValue),
            "figure": .string(figure.kind.title),
            "unit": .string(figure.kind.unit),
            "target": .string(figure.kind.targetText),
        ]
        object["value"] = figure.value.map(number) ?? .null
        object["baseline"] = figure.baseline.map(number) ?? .null
        object["baseline_is"] = figure.kind.baselineName.map { .string($0) } ?? .null
        object["ratio"] = figure.ratio.map(number) ?? .null
        // null for a figure only reported: it has nothing to meet.
        object["met"] = figure.isJudged ? .bool(figure.isMet) : .null
        if let failure = figure.failure { object["failure"] = .string(failure) }
        if !figure.details.isEmpty { object["details"] = .object(figure.details) }
        return .object(object)
    }

    /// A number rounded to a microsecond's worth of precision, so the file stays readable.
    static func number(_ value: Double) -> JSONValue {
        guard value.isFinite else { return .null }
        let rounded = (value * 1000).rounded() / 1000
        return rounded == rounded.rounded() && abs(rounded) < 1e15 ? .int(Int64(rounded)) : .double(rounded)
    }

    static func write(_ json: JSONValue, to path: String) throws(Errno) {
        var bytes = json.serialized
        bytes.append(UInt8(ascii: "\n"))
        let file = try FileDescriptor.open(path, O_WRONLY | O_CREAT | O_TRUNC, mode: 0o644)
        defer { file.close() }
        try file.writeAll(bytes)
    }
}
