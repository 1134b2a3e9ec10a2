/// An interface a `VarlinkService` serves: its name, its description (the IDL text that
/// `GetInterfaceDescription` returns) and a handler for each of its methods.
package struct VarlinkInterface {
    /// Answers one call of a method: a reply, a stream of replies (for a call with `more`),
    /// or a thrown error, which the caller gets as an error reply.
    package typealias Method = (VarlinkCall) throws(VarlinkError) -> VarlinkAnswer

    package let name: String
    package let description: String
    /// By member name: `Get` for `io.stopwatchd.Get`.
    package var methods: [String: Method]

    package init(name: String, description: String, methods: [String: Method] = [:]) {
        self.name = name
        self.description = description
        self.methods = methods
    }
}
