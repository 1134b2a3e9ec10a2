/// Pending deadlines by instant, nearest first: a binary heap, with cancelled entries
/// dropped as they come up (or all at once when they outnumber the live ones, so that
/// connections that come and go cannot make it grow without end).
struct Deadlines {
    private var heap: [(deadline: Duration, token: UInt64)] = []
    private var handlers: [UInt64: () -> Void] = [:]

    /// The nearest live deadline.
    var nearest: Duration? {
        mutating get {
            dropCancelledTop()
            return heap.first?.deadline
        }
    }

    mutating func insert(_ token: UInt64, at deadline: Duration, _ handler: @escaping () -> Void) {
        handlers[token] = handler
        heap.append((deadline, token))
        siftUp(heap.count - 1)
    }

    mutating func remove(_ token: UInt64) {
        guard handlers.removeValue(forKey: token) != nil else { return }
        if heap.count > 64, heap.count > 2 * handlers.count { rebuild() }
    }

    /// The handler of a deadline that is due at `now`, removed; nil when none is.
    mutating func removeDue(at now: Duration) -> (() -> Void)? {
        dropCancelledTop()
        guard let top = heap.first, top.deadline <= now else { return nil }
        popTop()
        return handlers.removeValue(forKey: top.token)
    }

    private mutating func dropCancelledTop() {
        while let top = heap.first, handlers[top.token] == nil { popTop() }
    }

    private mutating func popTop() {
        heap.swapAt(0, heap.count - 1)
        heap.removeLast()
        if !heap.isEmpty { siftDown(0) }
    }

    private mutating func rebuild() {
        heap.removeAll { handlers[$0.token] == nil }
        for index in stride(from: heap.count / 2 - 1, through: 0, by: -1) { siftDown(index) }
    }

    private mutating func siftUp(_ start: Int) {
        var child = start
        while child > 0 {
            let parent = (child - 1) / 2
            guard heap[child].deadline < heap[parent].deadline else { return }
            heap.swapAt(child, parent)
            child = parent
        }
    }

    private mutating func siftDown(_ start: Int) {
        var parent = start
        while true {
            let left = 2 * parent + 1
            let right = left + 1
            var smallest = parent
            if left < heap.count, heap[left].deadline < heap[smallest].deadline { smallest = left }
            if right < heap.count, heap[right].deadline < heap[smallest].deadline { smallest = right }
            guard smallest != parent else { return }
            heap.swapAt(parent, smallest)
            parent = smallest
        }
    }
}
