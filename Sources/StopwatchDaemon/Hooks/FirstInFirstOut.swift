/// A first-in, first-out queue on one array: taken from the front by moving `head`, each
/// element released as it is taken, and the spent front dropped in one move once it is
/// most of the array, so a take costs O(1) on average and the array follows what waits.
/// What waits for hooks, in the outbox and in the pool of runs.
struct FirstInFirstOut<Element> {
    /// Slots before `head` are spent (nil).
    private var slots: [Element?] = []
    private var head = 0

    var count: Int { slots.count - head }
    var isEmpty: Bool { count == 0 }
    var first: Element? { head < slots.count ? slots[head] : nil }
    /// The elements, oldest first.
    var elements: some Sequence<Element> { slots[head...].lazy.compactMap { $0 } }

    /// Replaces each element by `transform` of it, in place and in order.
    mutating func update(_ transform: (Element) -> Element) {
        for index in head..<slots.count {
            if let element = slots[index] { slots[index] = transform(element) }
        }
    }

    mutating func append(_ element: Element) {
        slots.append(element)
    }

    mutating func popFirst() -> Element? {
        guard head < slots.count else { return nil }
        let element = slots[head]
        slots[head] = nil
        head += 1
        if head == slots.count {
            slots.removeAll(keepingCapacity: true)
            head = 0
        } else if head >= 64, head * 2 >= slots.count {
            slots.removeFirst(head)
            head = 0
        }
        return element
    }
}
