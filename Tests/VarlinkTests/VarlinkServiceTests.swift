import Testing
import Varlink

/// The generic service: org.varlink.service for whatever is registered, calls routed to
/// their handlers, the standard errors for the rest.
@Suite("varlink service")
struct VarlinkServiceTests {
    static let description = """
        interface org.example.ping

        method Ping(text: string) -> (text: string)
        """

    /// A service with one interface of one method: the whole of what adding a method takes.
    static func service() -> VarlinkService {
        let service = VarlinkService(info: .init(vendor: "Example", product: "pingd", version: "1.0", url: "https://example.org"))
        service.register(VarlinkInterface(name: "org.example.ping", description: description, methods: [
            "Ping": { call throws(VarlinkError) in
                guard case .string(let text)? = call.parameters["text"] else { throw .invalidParameter("text") }
                return .reply(["text": .string(text)])
            },
        ]))
        return service
    }

    static func reply(_ service: VarlinkService, _ method: String, _ parameters: JSONObject = [:]) -> Result<JSONObject, VarlinkError> {
        service.answer(VarlinkCall(method: method, parameters: parameters)).map { answer in
            if case .reply(let reply) = answer { reply } else { [:] }
        }
    }

    @Test("a registered method is called with the call; what it throws is the error reply")
    func routing() {
        let service = Self.service()
        #expect(Self.reply(service, "org.example.ping.Ping", ["text": .string("hi")]) == .success(["text": .string("hi")]))
        #expect(Self.reply(service, "org.example.ping.Ping") == .failure(.invalidParameter("text")))
        #expect(Self.reply(service, "org.example.ping.Pong") == .failure(.methodNotFound("org.example.ping.Pong")))
        #expect(Self.reply(service, "org.example.other.Ping") == .failure(.interfaceNotFound("org.example.other")))
        #expect(Self.reply(service, "Ping") == .failure(.interfaceNotFound("")))
    }

    @Test("a reply already written (`VarlinkAnswer.message`) goes out as it is; a oneway call gets none")
    func messageAnswer() {
        let written = VarlinkReply(parameters: ["text": .string("written")]).message
        let service = VarlinkService(info: .init(vendor: "Example", product: "pingd", version: "1.0", url: "https://example.org"))
        service.register(VarlinkInterface(name: "org.example.ping", description: Self.description, methods: [
            "Ping": { _ throws(VarlinkError) in .message(written) },
        ]))
        let call = Array(#"{"method":"org.example.ping.Ping","parameters":{"text":"x"}}"#.utf8)
        guard case .message(let bytes) = service.respond(to: call) else {
            Issue.record("no message")
            return
        }
        #expect(bytes == written)
        let oneway = Array(#"{"method":"org.example.ping.Ping","parameters":{"text":"x"},"oneway":true}"#.utf8)
        guard case .nothing = service.respond(to: oneway) else {
            Issue.record("a oneway call answered")
            return
        }
        let more = Array(#"{"method":"org.example.ping.Ping","parameters":{"text":"x"},"more":true}"#.utf8)
        guard case .message(let once) = service.respond(to: more) else {
            Issue.record("a call with more not answered once")
            return
        }
        #expect(once == written)
    }

    @Test("the method is cut at its last dot, whatever characters surround it")
    func methodParts() {
        let call = VarlinkCall(method: "org.example.ping.Ping")
        #expect(call.interface == "org.example.ping" && call.memberName == "Ping")
        #expect(VarlinkCall(method: "Ping").interface == "" && VarlinkCall(method: "Ping").memberName == "Ping")
        #expect(VarlinkCall(method: "a.").interface == "a" && VarlinkCall(method: "a.").memberName == "")
        // A dot followed by a combining mark is still the last dot: cut in the UTF-8 bytes.
        let combining = VarlinkCall(method: "org.example.ping.\u{301}Ping")
        #expect(combining.interface == "org.example.ping" && combining.memberName == "\u{301}Ping")
        #expect(VarlinkCall(method: "é.ü.ß").interface == "é.ü" && VarlinkCall(method: "é.ü.ß").memberName == "ß")
    }

    @Test("GetInfo lists org.varlink.service and every registered interface; GetInterfaceDescription gives each IDL")
    func serviceInterface() {
        let service = Self.service()
        let info = Self.reply(service, "org.varlink.service.GetInfo")
        #expect(info == .success([
            "vendor": .string("Example"), "product": .string("pingd"), "version": .string("1.0"),
            "url": .string("https://example.org"),
            "interfaces": .array([.string("org.varlink.service"), .string("org.example.ping")]),
        ]))
        let describe = { (name: String) in
            Self.reply(service, "org.varlink.service.GetInterfaceDescription", ["interface": .string(name)])
        }
        #expect(describe("org.example.ping") == .success(["description": .string(Self.description)]))
        #expect(describe("org.varlink.service") == .success(["description": .string(OrgVarlinkServiceInterface.description)]))
        #expect(describe("org.example.none") == .failure(.interfaceNotFound("org.example.none")))
        #expect(Self.reply(service, "org.varlink.service.GetInterfaceDescription") == .failure(.invalidParameter("interface")))
    }

    /// A stream that records whether it was cancelled.
    final class CountingStream: VarlinkReplyStream {
        var isCancelled = false
        func start(ready: @escaping () -> Void) {}
        func next() -> VarlinkStreamItem? { nil }
        func takeEnd() -> VarlinkError? { nil }
        func cancel() { isCancelled = true }
    }

    @Test("a stream only for a call with more; oneway gets nothing; a message that is no call is malformed")
    func respond() {
        let service = VarlinkService(info: .init(vendor: "v", product: "p", version: "1", url: "u"))
        let streams = [CountingStream(), CountingStream(), CountingStream()]
        var made = 0
        service.register(VarlinkInterface(name: "org.example.feed", description: "interface org.example.feed", methods: [
            "Follow": { _ in
                defer { made += 1 }
                return .stream(streams[made])
            },
        ]))
        let message = { (text: String) in Array(text.utf8) }
        guard case .stream(let first) = service.respond(to: message(#"{"method":"org.example.feed.Follow","more":true}"#)) else {
            Issue.record("no stream for a call with more")
            return
        }
        #expect(first === streams[0] && !streams[0].isCancelled)
        guard case .message(let reply) = service.respond(to: message(#"{"method":"org.example.feed.Follow"}"#)) else {
            Issue.record("no reply for a call without more")
            return
        }
        #expect(String(decoding: reply, as: UTF8.self).contains("org.varlink.service.ExpectedMore"))
        #expect(streams[1].isCancelled)
        guard case .nothing = service.respond(to: message(#"{"method":"org.example.feed.Follow","more":true,"oneway":true}"#)) else {
            Issue.record("a reply for a oneway call")
            return
        }
        #expect(streams[2].isCancelled)
        guard case .malformed(let reason) = service.respond(to: message("[1]")) else {
            Issue.record("a JSON array taken for a call")
            return
        }
        #expect(reason == "a call must be a JSON object")
    }
}

/// A method that answers plain calls without their trees: it answers those it takes, and
/// leaves to its full method those it declines and every call of another shape.
@Suite("varlink service: plain methods")
struct VarlinkServicePlainMethodTests {
    static func service() -> VarlinkService {
        let service = VarlinkService(info: .init(vendor: "Example", product: "pingd", version: "1.0", url: "https://example.org"))
        service.register(VarlinkInterface(
            name: "org.example.ping", description: VarlinkServiceTests.description,
            methods: ["Ping": { _ in .reply(["text": .string("full")]) }],
            plainMethods: ["Ping": { name in name == "decline" ? nil : Array("plain \(name ?? "-")".utf8) + [0] }]
        ))
        return service
    }

    private func respond(_ service: VarlinkService, _ text: String) -> [UInt8]? {
        if case .message(let bytes) = service.respond(to: Array(text.utf8)) { return bytes }
        return nil
    }

    @Test func plainCallsAnsweredByThePlainMethodTheRestByTheFullOne() {
        let service = Self.service()
        let full = VarlinkReply(parameters: ["text": .string("full")]).message
        #expect(respond(service, #"{"method":"org.example.ping.Ping","parameters":{"name":"a"}}"#) == Array("plain a".utf8) + [0])
        #expect(respond(service, #"{"method":"org.example.ping.Ping"}"#) == Array("plain -".utf8) + [0])
        #expect(respond(service, #"{"method":"org.example.ping.Ping","parameters":{"name":"decline"}}"#) == full)
        #expect(respond(service, #"{"method":"org.example.ping.Ping","parameters":{"text":"a"}}"#) == full)
        #expect(respond(service, #"{"method":"org.example.ping.Ping","parameters":{"name":"a\u0062"}}"#) == full)
        // Oneway: no reply at all, never the plain method's.
        if case .nothing = service.respond(to: Array(#"{"method":"org.example.ping.Ping","oneway":true}"#.utf8)) {} else {
            Issue.record("a oneway call was answered")
        }
    }

    @Test func registeringAnInterfaceAgainReplacesItsPlainMethods() {
        let service = Self.service()
        service.register(VarlinkInterface(
            name: "org.example.ping", description: VarlinkServiceTests.description,
            methods: ["Ping": { _ in .reply(["text": .string("full")]) }]
        ))
        #expect(respond(service, #"{"method":"org.example.ping.Ping","parameters":{"name":"a"}}"#) == VarlinkReply(parameters: ["text": .string("full")]).message)
    }
}
