import StopwatchProtocol
import Testing
import Varlink
@testable import swctl

/// `swctl devices`, `log --device`, `report --device` and `report --by device`: the command
/// line, the devices table, the totals per device and their text, CSV and JSON, and log's
/// DEVICE column and filter.
@Suite("swctl devices and --by device")
struct DevicesOutputTests {
    static let laptop = Device(
        id: String(repeating: "a", count: 32), name: "laptop", this: true, intervals: 1_234, lastEndMs: 1_700_000_000_000,
        changedMs: 1_700_000_060_000
    )
    static let desk = Device(id: "0123456789abcdef0123456789abcdef", name: "desk", this: false, intervals: 0)

    @Test("devices takes nothing; --device goes with log and report; --by takes device")
    func commandLine() throws {
        #expect(try SwctlInvocation.parse(["devices"]) == .run(SwctlInvocation(.devices)))
        #expect(try SwctlInvocation.parse(["--json", "devices"]) == .run(SwctlInvocation(.devices, json: true)))
        #expect(throws: UsageError.self) { try SwctlInvocation.parse(["devices", "laptop"]) }
        #expect(throws: UsageError.self) { try SwctlInvocation.parse(["status", "--device", "laptop"]) }
        #expect(throws: UsageError.self) { try SwctlInvocation.parse(["log", "--device", ""]) }
        #expect(
            try SwctlInvocation.parse(["log", "tea", "--device", "desk"])
                == .run(SwctlInvocation(.log(name: "tea", HistoryRange(device: "desk"), .text)))
        )
        #expect(
            try SwctlInvocation.parse(["report", "--by", "device", "--device", "laptop", "--csv"])
                == .run(SwctlInvocation(.report(HistoryRange(device: "laptop"), by: .device, .csv)))
        )
    }

    @Test("The devices table: name, the id's first 8 digits, intervals right-aligned, the latest end and last change in local time (- for none), and which one is this")
    func devicesTable() {
        let end = LocalTime.dateTime(Self.laptop.lastEndMs!)!.text
        let changed = LocalTime.dateTime(Self.laptop.changedMs!)!.text
        let lines = DevicesText.table([Self.laptop, Self.desk])
        #expect(lines.count == 3)
        #expect(lines[0].hasPrefix("NAME    ID        INTERVALS  LATEST END"))
        #expect(lines[1] == "laptop  aaaaaaaa       1234  \(end)  \(changed)  this device")
        #expect(lines[2].hasPrefix("desk    01234567          0  -"))
        #expect(!lines[2].hasSuffix("this device"))
        #expect(DevicesText.table([]) == ["no devices"])
    }

    @Test("log's DEVICE column: when more than one device has history (Devices), else as the rows span; --device as an id is compared by that device's name")
    func logDeviceColumnAndFilter() {
        #expect(DevicesText.severalHaveHistory([Self.laptop, Self.desk]) == false)
        var deskWithHistory = Self.desk
        deskWithHistory.intervals = 3
        #expect(DevicesText.severalHaveHistory([Self.laptop, deskWithHistory]))
        #expect(DevicesText.name(of: Self.desk.id, among: [Self.laptop, Self.desk]) == "desk")
        #expect(DevicesText.name(of: "laptop", among: [Self.laptop, Self.desk]) == "laptop")
        let one = Interval(id: "0000000000000001", name: "tea", startMs: 0, endMs: 1_000, elapsedMs: 1_000, device: "laptop")
        let other = Interval(id: "0000000000000002", name: "tea", startMs: 1_000, endMs: 2_000, elapsedMs: 1_000, device: "desk")
        // Rows of one device: a column only when Devices says several have history.
        for (column, expected) in [(nil, 0), (false, 0), (true, 6)] as [(Bool?, Int)] {
            var survey = LogNumbering.Survey()
            survey.deviceColumn = column
            LogNumbering(name: nil, until: nil).survey([one], into: &survey)
            #expect(survey.layout.deviceWidth == expected)
        }
        // Rows of two devices, with a daemon without Devices, or with Devices counting one
        // device's intervals only (the other's only one still counting): the column.
        for column in [nil, false] as [Bool?] {
            var spanning = LogNumbering.Survey()
            spanning.deviceColumn = column
            LogNumbering(name: nil, until: nil).survey([one, other], into: &spanning)
            #expect(spanning.layout.deviceWidth == 6)
        }
        // --device: only its rows, numbered among all.
        var filtered = LogNumbering.Survey()
        LogNumbering(name: nil, until: nil, device: "desk").survey([one, other], into: &filtered)
        #expect(filtered.ended == 2 && filtered.shown == 1)
        #expect(filtered.numberedRows?.map(\.number) == [1])
        #expect(filtered.numberedRows?.map(\.interval.device) == ["desk"])
    }

    @Test("--device: a name or a full id as given, a unique id prefix of 8 digits or more as the full id; none or several refused; an id whose name another device shares warns that the table shows both")
    func deviceResolution() {
        var twin = Self.desk
        twin.id = String(repeating: "9", count: 32)
        let devices = [Self.laptop, Self.desk]
        #expect(DevicesText.resolve("desk", among: devices) == .device("desk"))
        #expect(DevicesText.resolve(Self.desk.id, among: devices) == .device(Self.desk.id))
        #expect(DevicesText.resolve(String(Self.desk.id.prefix(8)), among: devices) == .device(Self.desk.id))
        #expect(DevicesText.resolve(String(Self.desk.id.prefix(7)), among: devices) == .none)
        #expect(DevicesText.resolve("deks", among: devices) == .none)
        var cousin = Self.desk
        cousin.id = String(Self.desk.id.prefix(8)) + String(repeating: "f", count: 24)
        #expect(DevicesText.resolve(String(Self.desk.id.prefix(8)), among: devices + [cousin]) == .ambiguous)
        var warned: [String] = []
        #expect(DevicesText.name(of: Self.desk.id, among: devices + [twin], warn: { warned.append($0) }) == "desk")
        #expect(warned.count == 1 && warned[0].contains("another device is named 'desk'"), "\(warned)")
        #expect(DevicesText.name(of: Self.desk.id, among: devices, warn: { warned.append($0) }) == "desk")
        #expect(warned.count == 1)
    }

    @Test("report --by device: time per device and name, devices longest first, each with its total, clipped as by name; the plain totals unchanged")
    func aggregationByDevice() {
        var aggregator = ReportAggregator(since: 1_000, until: 10_000, now: 20_000, byDay: false)
        aggregator.add(byDevice: Interval(name: "a", startMs: 0, endMs: 2_000, elapsedMs: 2_000, device: "desk"))  // 1,000 inside
        aggregator.add(byDevice: Interval(name: "b", startMs: 2_000, endMs: 5_000, elapsedMs: 3_000, device: "laptop"))
        aggregator.add(byDevice: Interval(name: "a", startMs: 5_000, endMs: 6_000, elapsedMs: 1_000, device: "laptop"))
        aggregator.add(byDevice: Interval(name: "a", startMs: 6_000, endMs: 7_000, elapsedMs: 1_000, device: "café"))
        aggregator.add(byDevice: Interval(name: "a", startMs: 7_000, endMs: 9_000, elapsedMs: 2_000, device: "cafe\u{301}"))
        let totals = aggregator.totals
        #expect(totals.groups.map(\.label) == ["laptop", "cafe\u{301}", "café", "desk"])
        #expect(totals.groups.map(\.total) == [4_000, 2_000, 1_000, 1_000])
        #expect(totals.groups[0].names == [.init(name: "b", milliseconds: 3_000), .init(name: "a", milliseconds: 1_000)])
        #expect(totals.names == [.init(name: "a", milliseconds: 5_000), .init(name: "b", milliseconds: 3_000)])
        #expect(totals.total == 8_000)
        // The plain path names no device.
        var plain = ReportAggregator(since: nil, until: nil, now: 0, byDay: false)
        plain.add(Interval(name: "a", startMs: 0, endMs: 1_000, elapsedMs: 1_000, device: "desk"))
        #expect(plain.totals.groups.isEmpty)
    }

    @Test("report --by device as text (a chart of devices on a terminal), CSV (device,name,elapsed_ms, fields neutralised) and JSON (devices in place of names)")
    func reportTextByDevice() {
        let totals = ReportTotals(
            names: [.init(name: "tea", milliseconds: 3_660_000)], days: [], total: 5_490_000,
            groups: [
                .init(label: "laptop", names: [.init(name: "tea", milliseconds: 3_600_000), .init(name: "x", milliseconds: 60_000)], total: 3_660_000),
                .init(label: "=desk", names: [.init(name: "x", milliseconds: 1_830_000)], total: 1_830_000),
            ]
        )
        #expect(ReportText.humanByDevice(totals, bars: false) == [
            "DEVICE  NAME   TIME",
            "laptop  tea    1:00:00",
            "        x      0:01:00",
            "        total  1:01:00",
            "=desk   x      0:30:30",
            "        total  0:30:30",
            "total          1:31:30",
        ])
        let withBars = ReportText.humanByDevice(totals, bars: true)
        #expect(withBars.suffix(3) == ["", "laptop  1:01:00  " + String(repeating: "█", count: 20), "=desk   0:30:30  ██████████"])
        #expect(ReportText.csvByDevice(totals) == ["device,name,elapsed_ms", "laptop,tea,3600000", "laptop,x,60000", "'=desk,x,1830000"])
        #expect(
            ReportText.jsonByDevice(totals, since: nil, until: 9).text
                == #"{"since_ms":null,"until_ms":9,"devices":[{"device":"laptop","names":[{"name":"tea","elapsed_ms":3600000},{"name":"x","elapsed_ms":60000}],"total_ms":3660000},{"device":"=desk","names":[{"name":"x","elapsed_ms":1830000}],"total_ms":1830000}],"total_ms":5490000}"#
        )
    }
}
