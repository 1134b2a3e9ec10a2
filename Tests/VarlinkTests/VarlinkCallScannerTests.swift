import Testing
import Varlink

/// A plain call read without a parse tree: what the scanner takes, it reads as the parser
/// does; the rest it leaves to the parser (nil).
@Suite("varlink call scanner")
struct VarlinkCallScannerTests {
    private func scan(_ text: String) -> ScannedCall? {
        VarlinkCallScanner.scan(Array(text.utf8))
    }

    @Test(
        "the plain shapes: read as the parser reads them",
        arguments: [
            #"{"method":"io.stopwatchd.Get","parameters":{"name":"work"}}"#,
            #"{"parameters":{"name":"work"},"method":"io.stopwatchd.Get"}"#,
            " {\t\"method\" :\n\"io.stopwatchd.Get\" ,\r\"parameters\" : { \"name\" : \"work\" } } ",
            #"{"method":"io.stopwatchd.Get","parameters":{}}"#,
            #"{"method":"io.stopwatchd.Get"}"#,
            #"{"method":"io.stopwatchd.Get","parameters":{"name":"zeit für 🍅"}}"#,
            #"{"method":"","parameters":{"name":""}}"#,
        ]
    )
    func plainShapes(_ text: String) throws {
        let scanned = try #require(scan(text))
        let call = try VarlinkCall(message: Array(text.utf8))
        #expect(scanned.method == call.method)
        let name: String? = if case .string(let given)? = call.parameters["name"] { given } else { nil }
        #expect(scanned.name == name)
        #expect(call.parameters.keys.allSatisfy { $0 == "name" })
    }

    @Test(
        "anything else is the parser's",
        arguments: [
            #"{"method":"io.stopwatchd.Get","more":true}"#,
            #"{"method":"io.stopwatchd.Get","oneway":true}"#,
            #"{"method":"io.stopwatchd.Get","parameters":{"name":"a"},"upgrade":false}"#,
            #"{"method":"io.stopwatchd.Get","parameters":{"name":null}}"#,
            #"{"method":"io.stopwatchd.Get","parameters":{"name":"a","note":"b"}}"#,
            #"{"method":"io.stopwatchd.Get","parameters":{"target_ms":5}}"#,
            #"{"method":"io.stopwatchd.G\u0065t"}"#,
            #"{"method":"io.stopwatchd.Get","parameters":{"name":"a\"b"}}"#,
            #"{"method":"io.stopwatchd.Get","method":"io.stopwatchd.Get"}"#,
            #"{"method":"io.stopwatchd.Get","parameters":{},"parameters":{}}"#,
            #"{"method":"io.stopwatchd.Get"} x"#,
            #"{"method":"io.stopwatchd.Get",}"#,
            #"{"method":"io.stopwatchd.Get""#,
            #"{"parameters":{"name":"a"}}"#,
            #"{}"#,
            #"[]"#,
            "",
            "{\"method\":\"io.stopwatchd.Get\u{1}\"}",
        ]
    )
    func otherShapes(_ text: String) {
        #expect(scan(text) == nil)
    }

    @Test("a name that is not valid UTF-8 is the parser's")
    func invalidUTF8() {
        let message = Array(#"{"method":"io.stopwatchd.Get","parameters":{"name":""#.utf8) + [0xC3, 0x28] + Array(#""}}"#.utf8)
        #expect(VarlinkCallScanner.scan(message) == nil)
    }
}
