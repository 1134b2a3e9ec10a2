// libFuzzer target over the daemon's message path: VarlinkFramer → JSONParser → VarlinkCall /
// VarlinkReply / Stopwatch. Built by Fuzz/run.sh, which compiles this file together with the
// sources of the package it needs (not the package), so everything here is in one module.
//
// The input is a byte stream as a client would send it. Parsing must never trap on any input;
// beyond that, each check below is an invariant whose failure calls `fatalError`, which
// libFuzzer reports as a crash.

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

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
    let reference = Reference(input)
    let whole = frame(input, limit: maximumMessageSize, chunkSizes: { _ in size })
    reference.check(whole, limit: maximumMessageSize, label: "whole input")
    guard !whole.threw || whole.messages.isEmpty else { fatalError("whole input: messages returned along with a throw") }
    for (label, chunking) in chunkings(input, selector: selector) {
        let split = frame(input, limit: maximumMessageSize, chunkSizes: chunking)
        reference.check(split, limit: maximumMessageSize, label: label)
    }
    // A small limit reaches the too-large path that 64 KiB inputs rarely do.
    let smallLimit = 1 + Int(selector % 32)
    let small = frame(input, limit: smallLimit, chunkSizes: { _ in 1 + Int(selector % 7) })
    reference.check(small, limit: smallLimit, label: "limit \(smallLimit)")

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

/// The input split at NUL bytes: what any framing of it must deliver.
private struct Reference {
    var complete: [UnsafeRawBufferPointer.SubSequence]
    var trailing: UnsafeRawBufferPointer.SubSequence
    var longest: Int

    init(_ input: UnsafeRawBufferPointer) {
        var segments = input.split(separator: 0, omittingEmptySubsequences: false)
        trailing = segments.removeLast()
        complete = segments
        longest = max(trailing.count, segments.lazy.map(\.count).max() ?? 0)
    }

    /// A framer throws exactly when some message (or the unfinished one) is over `limit`; until
    /// then it returns the input's messages in order, and afterwards knows of the unfinished one.
    func check(_ framing: Framing, limit: Int, label: String) {
        let tooLarge = longest > limit
        guard framing.threw == tooLarge else {
            fatalError("\(label): framer threw \(framing.threw), longest message \(longest) bytes, limit \(limit)")
        }
        let count = framing.messages.count
        guard tooLarge ? count <= complete.count : count == complete.count else {
            fatalError("\(label): framed \(count) messages of \(complete.count) (too large: \(tooLarge))")
        }
        guard zip(framing.messages, complete).allSatisfy({ sameBytes($0, $1) }) else {
            fatalError("\(label): framed messages differ from the input's")
        }
        guard tooLarge || framing.hasPartialMessage == !trailing.isEmpty else {
            fatalError("\(label): hasPartialMessage \(framing.hasPartialMessage) with \(trailing.count) trailing bytes")
        }
    }
}

/// Whether `message` holds exactly `segment`'s bytes (memcmp: a byte loop here is traced by the
/// fuzzer's instrumentation and dominated the run time).
private func sameBytes(_ message: [UInt8], _ segment: UnsafeRawBufferPointer.SubSequence) -> Bool {
    guard message.count == segment.count else { return false }
    guard !message.isEmpty else { return true }
    return message.withUnsafeBytes { memcmp($0.baseAddress!, segment.base.baseAddress! + segment.startIndex, segment.count) == 0 }
}

// MARK: - Messages

private func checkMessage(_ message: [UInt8], reducedDepth: Int) {
    checkScannedCall(message)
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

/// `decoded` encodes to JSON (as is, and through the wire: text and back) that decodes to
/// the same value again.
private func checkRoundTrip<Message: Equatable, Failure: Error>(
    _ decoded: Message,
    from value: JSONValue,
    named name: String,
    encode: (Message) -> JSONValue,
    decode: (JSONValue) throws(Failure) -> Message
) {
    for encoded in [encode(decoded), wireRoundTrip(encode(decoded), name)] {
        let again: Message
        do {
            again = try decode(encoded)
        } catch {
            fatalError("\(name).json does not decode: \(error); json: \(encoded.text)")
        }
        guard again == decoded else { fatalError("\(name) round trip changed it: \(value.text) → \(encoded.text)") }
    }
}

private func checkCall(_ value: JSONValue) {
    guard let call = try? VarlinkCall(json: value) else { return }
    checkRoundTrip(call, from: value, named: "VarlinkCall", encode: \.json, decode: VarlinkCall.init(json:))
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
    checkRoundTrip(reply, from: value, named: "VarlinkReply", encode: \.json, decode: VarlinkReply.init(json:))
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
    // Written without a tree, the same bytes as through one (a plain Get's reply).
    var direct: [UInt8] = []
    stopwatch.writeJSON(into: &direct)
    guard direct == stopwatch.json.serialized else {
        fatalError("Stopwatch.writeJSON differs from json.serialized: \(String(decoding: direct, as: UTF8.self)) against \(stopwatch.json.text)")
    }
    guard stopwatch.getReplyMessage == VarlinkReply(parameters: ["stopwatch": stopwatch.json]).message else {
        fatalError("Stopwatch.getReplyMessage differs from the reply made through trees: \(stopwatch.json.text)")
    }
    let listed = [stopwatch, stopwatch]
    guard Stopwatch.listReplyMessage(listed) == VarlinkReply(parameters: ["stopwatches": .array(listed.map(\.json))]).message else {
        fatalError("Stopwatch.listReplyMessage differs from the reply made through trees: \(stopwatch.json.text)")
    }
}

/// A call the scanner reads (`VarlinkCallScanner`) is the call the full parser reads from the
/// same bytes: the same method, at most a `name` string as its parameter, neither `more` nor
/// `oneway`.
private func checkScannedCall(_ message: [UInt8]) {
    guard let scanned = VarlinkCallScanner.scan(message) else { return }
    let call: VarlinkCall
    do {
        call = try VarlinkCall(message: message)
    } catch {
        fatalError("the scanner read \(scanned) where the parser refuses: \(error); \(String(decoding: message, as: UTF8.self))")
    }
    let parameters: JSONObject = scanned.name.map { ["name": .string($0)] } ?? [:]
    guard call.method == scanned.method, call.parameters == parameters, !call.more, !call.oneway else {
        fatalError("the scanner read \(scanned) where the parser reads \(call.json.text)")
    }
}
