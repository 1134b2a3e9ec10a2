/// One message a watcher received, and when (boot clock).
struct Delivery: Sendable {
    let watcher: Int
    let received: Duration
    let message: [UInt8]
}
