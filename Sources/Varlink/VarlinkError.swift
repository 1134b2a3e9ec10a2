/// An error a varlink method answers with: a qualified name and its parameters.
package struct VarlinkError: Error, Equatable, Sendable, CustomStringConvertible {
    package let name: String
    package let parameters: JSONObject

    package init(name: String, parameters: JSONObject = [:]) {
        self.name = name
        self.parameters = parameters
    }

    package var description: String {
        parameters.isEmpty ? name : "\(name) \(JSONValue.object(parameters).text)"
    }

    // org.varlink.service
    package static func interfaceNotFound(_ interface: String) -> VarlinkError {
        VarlinkError(name: "org.varlink.service.InterfaceNotFound", parameters: ["interface": .string(interface)])
    }
    package static func methodNotFound(_ method: String) -> VarlinkError {
        VarlinkError(name: "org.varlink.service.MethodNotFound", parameters: ["method": .string(method)])
    }
    package static func invalidParameter(_ parameter: String) -> VarlinkError {
        VarlinkError(name: "org.varlink.service.InvalidParameter", parameters: ["parameter": .string(parameter)])
    }
    package static let permissionDenied = VarlinkError(name: "org.varlink.service.PermissionDenied")
    package static let expectedMore = VarlinkError(name: "org.varlink.service.ExpectedMore")
}
