/// How long and how often each measurement runs: briefly with `--smoke` (only that it
/// works), long enough for stable medians and 99th percentiles otherwise.
struct BenchPlan {
    let isSmoke: Bool
    /// Round trips timed one by one, per side (daemon, echo), in alternating blocks.
    let roundTrips: Int
    let roundTripBlocks: Int
    let throughputClients = 8
    /// Alternating daemon/echo rounds of `throughputRound` each.
    let throughputRounds: Int
    let throughputRound: Duration
    /// Process starts timed per side (swctl, /bin/true), alternating.
    let processRuns: Int
    let watchers = 1_000
    let tick: Duration = .seconds(1)
    /// Ticks measured per fan-out (daemon, then the raw baseline).
    let fanOutTicks: Int
    /// How long a daemon is left alone after READY before its wake-ups are counted.
    let settle: Duration
    let wakeupWindow: Duration
    let readyRuns: Int
    let loadedReadyRuns: Int
    let loadedStopwatches = 10_000
    let driftPeriod: Duration
    /// Watched countdowns, expiring `countdownSpacing` apart, the first `countdownLead`
    /// after it is set: time enough to set them all before the first ends.
    let countdowns: Int
    let countdownSpacing: Duration = .milliseconds(10)
    let countdownLead: Duration
    /// Watched automatic cycles, their first phases ending `cycleSpacing` apart, the first
    /// `cycleLead` after it is set, as the countdowns'.
    let cycles: Int
    let cycleSpacing: Duration = .milliseconds(10)
    let cycleLead: Duration
    /// Counting countdowns restored, nobody watching; those expiring during the wake-up
    /// count do so this far apart (the rest are hours away).
    let unwatchedCountdowns = 10_000
    let countdownExpirySpacing: Duration = .milliseconds(500)
    /// Activations of an exit-on-idle daemon, each costing its idle period and more.
    let exitIdleCycles: Int
    let exitIdlePeriod: Duration = .seconds(1)
    /// How long after the period the daemon may take to be gone.
    let exitIdleMargin: Duration = .seconds(1)
    /// `swctl status` runs against the running daemon, the baseline.
    let exitIdleWarmRuns: Int
    /// Lap calls timed per stopwatch size (10, 1,000, 10,000 laps), one of each in turn.
    let lapSamples: Int
    let lapSizes = [10, 1_000, 10_000]
    /// Start, Lap and Stop calls timed, each (on as many stopwatches).
    let transitionSamples: Int
    /// Timed runs of each floor of a big Lap (echo of its reply size, a file of its size).
    let lapFloorSamples: Int
    /// The long history (`report` over it, and `log --since today`) and the short one
    /// (`log --since today`'s baseline), with `historyToday` intervals today in both.
    let historyIntervals: Int
    /// Corrections (amends and deletes) written with the long history, in its last month.
    let historyCorrections: Int
    let historyShortIntervals = 1_000
    let historyToday = 40
    /// `report` runs (each beside a parse of the files), and `log` runs per side.
    let historyRuns: Int
    let historyLogRuns: Int
    /// Connections that call History with `more` and read nothing until the daemon is idle,
    /// over a history of `historyStalledIntervals`: more than two replies of 10,000 each.
    let historyStalledReaders: Int
    let historyStalledIntervals: Int

    init(smoke: Bool, driftSeconds: Int?) {
        isSmoke = smoke
        roundTrips = smoke ? 1_000 : 20_000
        roundTripBlocks = smoke ? 2 : 10
        throughputRounds = smoke ? 1 : 3
        throughputRound = smoke ? .milliseconds(500) : .seconds(2)
        processRuns = smoke ? 20 : 300
        fanOutTicks = smoke ? 3 : 20
        settle = smoke ? .milliseconds(500) : .seconds(6)
        wakeupWindow = smoke ? .seconds(2) : .seconds(10)
        readyRuns = smoke ? 3 : 20
        loadedReadyRuns = smoke ? 1 : 5
        driftPeriod = .seconds(driftSeconds ?? (smoke ? 5 : 600))
        countdowns = smoke ? 100 : 1_000
        countdownLead = smoke ? .seconds(2) : .seconds(10)
        cycles = smoke ? 20 : 1_000
        // Longer than the countdowns' lead: the instants are read from the state files once
        // every cycle is set, and a cycle whose first phase ended before that (a slow setup,
        // seen at 8.8 s of 10 in a debug build) would show its second phase's origin.
        cycleLead = smoke ? .seconds(3) : .seconds(20)
        exitIdleCycles = smoke ? 2 : 20
        exitIdleWarmRuns = smoke ? 10 : 100
        lapSamples = smoke ? 60 : 2_000
        transitionSamples = smoke ? 20 : 500
        lapFloorSamples = smoke ? 20 : 500
        historyIntervals = smoke ? 20_000 : 1_000_000
        historyCorrections = smoke ? 200 : 10_000
        historyRuns = smoke ? 1 : 7
        historyLogRuns = smoke ? 1 : 30
        historyStalledReaders = smoke ? 32 : 256
        historyStalledIntervals = smoke ? 12_000 : 50_000
    }
}
