// libFuzzer target over the daemon's message path: VarlinkFramer → JSONParser → VarlinkCall /
// VarlinkReply / Stopwatch. Built by Fuzz/run.sh, which compiles this file together with the
// StopWatchCore sources it needs (not the package), so everything here is in one module.
//
// The input is a byte stream as a client would send it. Parsing must never trap on any input;
// beyond that, each check below is an invariant whose failure calls `fatalError`, which
// libFuzzer reports as a crash.

/// The limit the daemon's connections use.
private let maximumMessageSize = 64 * 1024

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let input = UnsafeRawBufferPointer(start: data, count: size)
    guard size > 0 else { return 0 }
    // The first byte stays part of the stream (so seed files are plain varlink traffic) and
    // also picks the chunk size and the reduced parsing depth below.
    let selector = input[0]

    // Framing: the whole input at once is the reference; the same bytes in other chunkings
    // must frame identically.
    let whole = frame(input, limit: maximumMessageSize, chunkSizes: { _ in size })
    checkAgainstReference(whole, input: input, limit: maximumMessageSize, label: "whole")
    for (label, chunking) in chunkings(input, selector: selector) {
        let split = frame(input, limit: maximumMessageSize, chunkSizes: chunking)
        checkSameFraming(whole, split, label: label)
    }
    // A small limit reaches the too-large path that 64 KiB inputs rarely do.
    let smallLimit = 1 + Int(selector % 32)
    let small = frame(input, limit: smallLimit, chunkSizes: { _ in 1 + Int(selector % 7) })
    checkAgainstReference(small, input: input, limit: smallLimit, label: "small limit \(smallLimit)")

    for message in whole.messages {
        checkMessage(message, reducedDepth: Int(selector % 16))
    }
    return 0
}

// MARK: - Framing

private struct Framing {
    /// Messages returned before the framer threw (or all of them).
    var messages: [[UInt8]] = []
    var threw = false
    var hasPartialMessage = false
}

/// Feeds `input` to a fresh framer in chunks whose sizes `chunkSizes` gives (by chunk index).
private func frame(_ input: UnsafeRawBufferPointer, limit: Int, chunkSizes: (Int) -> Int) -> Framing {
    var framer = VarlinkFramer(maximumMessageSize: limit)
    var result = Framing()
    var offset = 0
    var chunk = 0
    while offset < input.count {
        let length = min(max(1, chunkSizes(chunk)), input.count - offset)
        do {
            result.messages += try framer.append(UnsafeRawBufferPointer(rebasing: input[offset..<(offset + length)]))
        } catch {
            guard error.limit == limit else { fatalError("MessageTooLarge reports limit \(error.limit), not \(limit)") }
            result.threw = true
            return result
        }
        offset += length
        chunk += 1
    }
    result.hasPartialMessage = framer.hasPartialMessage
    return result
}

/// Chunkings besides the whole input: one byte at a time, a fixed size from the selector, and
/// irregular sizes read from the input itself.
private func chunkings(_ input: UnsafeRawBufferPointer, selector: UInt8) -> [(String, (Int) -> Int)] {
    let fixed = 2 + Int(selector % 64)
    return [
        ("1-byte chunks", { _ in 1 }),
        ("\(fixed)-byte chunks", { _ in fixed }),
        ("irregular chunks", { chunk in 1 + Int(input[chunk % input.count] % 23) }),
    ]
}

/// The framer over the whole input must match a plain split at NUL bytes.
private func checkAgainstReference(_ framing: Framing, input: UnsafeRawBufferPointer, limit: Int, label: String) {
    let segments = input.split(separator: 0, omittingEmptySubsequences: false)
    let complete = segments.dropLast()
    let trailing = segments.last!
    let tooLarge = segments.contains { $0.count > limit }
    guard framing.threw == tooLarge else {
        fatalError("\(label): framer threw \(framing.threw), but a segment over \(limit) bytes: \(tooLarge)")
    }
    if tooLarge {
        // Messages already returned are the first complete ones, each within the limit.
        guard framing.messages.count <= complete.count,
            zip(framing.messages, complete).allSatisfy({ $0.elementsEqual($1) })
        else { fatalError("\(label): messages before MessageTooLarge are not a prefix of the input's messages") }
    } else {
        guard framing.messages.count == complete.count,
            zip(framing.messages, complete).allSatisfy({ $0.elementsEqual($1) })
        else { fatalError("\(label): framed \(framing.messages.count) messages, expected \(complete.count)") }
        guard framing.hasPartialMessage == !trailing.isEmpty else {
            fatalError("\(label): hasPartialMessage \(framing.hasPartialMessage) with \(trailing.count) trailing bytes")
        }
    }
}

private func checkSameFraming(_ whole: Framing, _ split: Framing, label: String) {
    guard split.threw == whole.threw else { fatalError("\(label): threw \(split.threw), whole input threw \(whole.threw)") }
    if whole.threw {
        // Chunks may deliver messages before the one that is too large; all at once delivers none.
        guard whole.messages.isEmpty else { fatalError("whole input: messages returned along with a throw") }
    } else {
        guard split.messages == whole.messages else { fatalError("\(label): messages differ from the whole input's") }
        guard split.hasPartialMessage == whole.hasPartialMessage else { fatalError("\(label): hasPartialMessage differs") }
    }
}

// MARK: - Messages

private func checkMessage(_ message: [UInt8], reducedDepth: Int) {
    let value: JSONValue
    do {
        value = try JSONParser.parse(message)
    } catch {
        guard (0...message.count).contains(error.offset) else {
            fatalError("parse error offset \(error.offset) outside a \(message.count)-byte message: \(error)")
        }
        // Whatever fails at the default depth fails at a smaller one too.
        if let shallow = try? JSONParser.parse(message, maxDepth: reducedDepth) {
            fatalError("parses at maxDepth \(reducedDepth) (\(shallow.text)) but not at 64: \(error)")
        }
        return
    }
    checkJSON(value, message: message, reducedDepth: reducedDepth)
    checkCall(value)
    checkReply(value)
    checkStopwatch(value)
}

private func checkJSON(_ value: JSONValue, message: [UInt8], reducedDepth: Int) {
    // serialized → parse gives the same value, and serializing that gives the same bytes.
    let serialized = value.serialized
    let reparsed: JSONValue
    do {
        reparsed = try JSONParser.parse(serialized)
    } catch {
        fatalError("serialized value does not parse: \(error); serialized: \(String(decoding: serialized, as: UTF8.self))")
    }
    guard reparsed == value else {
        fatalError("serialized → parse changed the value: \(String(decoding: serialized, as: UTF8.self)) → \(reparsed.text)")
    }
    guard reparsed.serialized == serialized else {
        fatalError("serialization is not stable: \(String(decoding: serialized, as: UTF8.self)) then \(reparsed.text)")
    }

    // Accepted input is valid UTF-8 (non-ASCII only inside strings, which are checked), so the
    // String entry point sees the same bytes and must agree.
    let text = String(decoding: message, as: UTF8.self)
    guard text.utf8.elementsEqual(message) else { fatalError("accepted input is not valid UTF-8") }
    guard (try? JSONParser.parse(text)) == value else { fatalError("parse(String) disagrees with parse([UInt8])") }

    // A value nested D deep parses exactly when maxDepth >= D, to the same value.
    let depth = nesting(value)
    guard depth <= 64 else { fatalError("parsed a value nested \(depth) deep with maxDepth 64") }
    let shallow = try? JSONParser.parse(message, maxDepth: reducedDepth)
    if depth <= reducedDepth {
        guard shallow == value else { fatalError("nested \(depth) deep but differs or fails at maxDepth \(reducedDepth)") }
    } else {
        guard shallow == nil else { fatalError("nested \(depth) deep but parses at maxDepth \(reducedDepth)") }
    }
}

/// How many arrays and objects are nested in `value` at its deepest.
private func nesting(_ value: JSONValue) -> Int {
    switch value {
    case .array(let elements): 1 + (elements.map(nesting).max() ?? 0)
    case .object(let object): 1 + (object.members.map { nesting($0.value) }.max() ?? 0)
    default: 0
    }
}

/// Encodes `value` as on the wire and parses it back.
private func wireRoundTrip(_ value: JSONValue, _ what: String) -> JSONValue {
    do {
        return try JSONParser.parse(value.serialized)
    } catch {
        fatalError("\(what).json does not parse after serializing: \(error)")
    }
}

private func checkCall(_ value: JSONValue) {
    guard let call = try? VarlinkCall(json: value) else { return }
    for encoded in [call.json, wireRoundTrip(call.json, "VarlinkCall")] {
        let decoded: VarlinkCall
        do {
            decoded = try VarlinkCall(json: encoded)
        } catch {
            fatalError("VarlinkCall.json does not decode: \(error); json: \(encoded.text)")
        }
        guard decoded == call else { fatalError("VarlinkCall round trip changed it: \(value.text) → \(encoded.text)") }
    }
    // The method splits at its last dot.
    if call.method.contains(".") {
        guard call.interface + "." + call.memberName == call.method else {
            fatalError("interface \(call.interface) + memberName \(call.memberName) is not \(call.method)")
        }
    } else {
        guard call.interface.isEmpty, call.memberName == call.method else { fatalError("dotless method split wrongly") }
    }
}

private func checkReply(_ value: JSONValue) {
    guard let reply = try? VarlinkReply(json: value) else { return }
    for encoded in [reply.json, wireRoundTrip(reply.json, "VarlinkReply")] {
        let decoded: VarlinkReply
        do {
            decoded = try VarlinkReply(json: encoded)
        } catch {
            fatalError("VarlinkReply.json does not decode: \(error); json: \(encoded.text)")
        }
        guard decoded == reply else { fatalError("VarlinkReply round trip changed it: \(value.text) → \(encoded.text)") }
    }
    // The wire form is the JSON text and one NUL, and frames back to that text.
    let message = reply.message
    guard message.last == 0, message.dropLast() == reply.json.serialized[...] else {
        fatalError("VarlinkReply.message is not its JSON text and a NUL")
    }
    var framer = VarlinkFramer(maximumMessageSize: message.count)
    let framed = message.withUnsafeBytes { try? framer.append($0) }
    guard let framed, framed.count == 1, framed[0][...] == message.dropLast() else {
        fatalError("VarlinkReply.message does not frame back to one message")
    }
    if let stopwatch = reply.parameters["stopwatch"] { checkStopwatch(stopwatch) }
    if case .array(let stopwatches)? = reply.parameters["stopwatches"] { stopwatches.forEach(checkStopwatch) }
}

private func checkStopwatch(_ value: JSONValue) {
    guard let stopwatch = try? Stopwatch(json: value) else { return }
    for encoded in [stopwatch.json, wireRoundTrip(stopwatch.json, "Stopwatch")] {
        guard (try? Stopwatch(json: encoded)) == stopwatch else {
            fatalError("Stopwatch round trip changed it: \(value.text) → \(encoded.text)")
        }
    }
}
