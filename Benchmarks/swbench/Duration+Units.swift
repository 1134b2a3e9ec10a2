
extension Duration {
    var inMicroseconds: Double { Double(nanoseconds) / 1_000 }
    var inMilliseconds: Double { Double(nanoseconds) / 1_000_000 }
    var inSeconds: Double { Double(nanoseconds) / 1_000_000_000 }
}
