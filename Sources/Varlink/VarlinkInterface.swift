/// An interface a `VarlinkService` serves: its name, its description (the IDL text that
/// `GetInterfaceDescription` returns) and a handler for each of its methods.
package struct VarlinkInterface {
    /// Answers one call of a method: a reply, a stream of replies (for a call with `more`),
    /// or a thrown error, which the caller gets as an error reply.
    package typealias Method = (VarlinkCall) throws(VarlinkError) -> VarlinkAnswer

    /// Answers a plain call of a method (`VarlinkCallScanner`: at most a `name` parameter,
    /// given here) without its parse tree: the whole reply message, its NUL included; nil
    /// to leave the call to `methods`, which must answer the same bytes the same way.
    package typealias PlainMethod = (_ name: String?) -> [UInt8]?

    package let name: String
    package let description: String
    /// By member name: `Get` for `io.stopwatchd.Get`.
    package var methods: [String: Method]
    /// By member name, the methods that answer a plain call without its parse tree.
    package var plainMethods: [String: PlainMethod]

    package init(name: String, description: String, methods: [String: Method] = [:], plainMethods: [String: PlainMethod] = [:]) {
        self.name = name
        self.description = description
        self.methods = methods
        self.plainMethods = plainMethods
    }
}
