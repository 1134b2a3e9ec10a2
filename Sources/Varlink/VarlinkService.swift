/// A varlink service: answers `org.varlink.service` (GetInfo, GetInterfaceDescription and
/// its errors) for every interface registered with it, and routes each other call to its
/// interface's method.
///
/// Not thread-safe: register before serving, and answer on one queue.
package final class VarlinkService {
    /// What `GetInfo` reports.
    package struct Info: Sendable {
        package var vendor: String
        package var product: String
        package var version: String
        package var url: String

        package init(vendor: String, product: String, version: String, url: String) {
            self.vendor = vendor
            self.product = product
            self.version = version
            self.url = url
        }
    }

    private let info: Info
    /// In registration order, org.varlink.service first: the order GetInfo lists them in.
    private var interfaces: [VarlinkInterface] = []
    /// The interfaces' `plainMethods`, by fully qualified method.
    private var plainMethods: [String: VarlinkInterface.PlainMethod] = [:]

    package init(info: Info) {
        self.info = info
        interfaces.append(VarlinkInterface(
            name: OrgVarlinkServiceInterface.name,
            description: OrgVarlinkServiceInterface.description,
            methods: [
                "GetInfo": { [unowned self] _ in .reply(self.getInfo()) },
                "GetInterfaceDescription": { [unowned self] call throws(VarlinkError) in
                    try .reply(self.getInterfaceDescription(call))
                },
            ]
        ))
    }

    /// Serves `interface` from now on. A second interface of the same name replaces the first.
    package func register(_ interface: VarlinkInterface) {
        if let index = interfaces.firstIndex(where: { $0.name == interface.name }) {
            interfaces[index] = interface
        } else {
            interfaces.append(interface)
        }
        plainMethods = [:]
        for registered in interfaces {
            for (member, method) in registered.plainMethods { plainMethods[registered.name + "." + member] = method }
        }
    }

    /// What a connection does with one message it received.
    package enum Response {
        /// Send this (a whole message, NUL included).
        case message([UInt8])
        /// Send nothing: the call was oneway.
        case nothing
        /// Write this stream's replies as they come.
        case stream(any VarlinkReplyStream)
        /// The message is not a call: a protocol error, for this reason.
        case malformed(String)
    }

    /// The response to one message (without its NUL): the reply or error encoded, nothing
    /// for a oneway call, or the stream of a call made with `more`.
    package func respond(to message: [UInt8]) -> Response {
        // A plain call of a method that answers one without its tree (a status bar's Get).
        if !plainMethods.isEmpty, let plain = VarlinkCallScanner.scan(message), let method = plainMethods[plain.method],
            let reply = method(plain.name)
        {
            return .message(reply)
        }
        let call: VarlinkCall
        do {
            call = try VarlinkCall(message: message)
        } catch {
            return .malformed(error.reason)
        }
        switch answer(call) {
        case .success(.stream(let stream)):
            // Oneway, nobody would read it; without `more`, nobody asked for it, unless the
            // stream answers with one reply then.
            guard !call.oneway, call.more || stream.isFinite else {
                stream.cancel()
                return call.oneway ? .nothing : .message(VarlinkReply(.expectedMore).message)
            }
            return .stream(stream)
        case _ where call.oneway:
            return .nothing
        case .success(.reply(let parameters)):
            return .message(VarlinkReply(parameters: parameters).message)
        case .success(.message(let message)):
            return .message(message)
        case .failure(let error):
            return .message(VarlinkReply(error).message)
        }
    }

    /// The answer to `call`: its method's, or the error the caller is to get.
    package func answer(_ call: VarlinkCall) -> Result<VarlinkAnswer, VarlinkError> {
        guard let interface = interfaces.first(where: { $0.name == call.interface }) else {
            return .failure(.interfaceNotFound(call.interface))
        }
        guard let method = interface.methods[call.memberName] else {
            return .failure(.methodNotFound(call.method))
        }
        do {
            return .success(try method(call))
        } catch {
            return .failure(error)
        }
    }

    private func getInfo() -> JSONObject {
        [
            "vendor": .string(info.vendor),
            "product": .string(info.product),
            "version": .string(info.version),
            "url": .string(info.url),
            "interfaces": .array(interfaces.map { .string($0.name) }),
        ]
    }

    private func getInterfaceDescription(_ call: VarlinkCall) throws(VarlinkError) -> JSONObject {
        guard case .string(let name)? = call.parameters["interface"] else { throw .invalidParameter("interface") }
        guard let interface = interfaces.first(where: { $0.name == name }) else { throw .interfaceNotFound(name) }
        return ["description": .string(interface.description)]
    }
}
