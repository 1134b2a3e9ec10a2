import LinuxSystem
import StopwatchProtocol

/// How the files in `stopwatches/` are named: `<encoded name>.json` holds a stopwatch, and
/// `.<encoded name>.json.tmp` is its next content while it is being written (hidden, so that
/// no reader takes it for a stopwatch).
///
/// The encoding is reversible and ASCII: every UTF-8 byte outside `[A-Za-z0-9._-]` is `%XX`
/// (uppercase hex), and so is a leading `.`, so no stopwatch file is hidden or taken for a
/// temporary one. Names of the first protocol (`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`) encode
/// to themselves: their files load unchanged. Being ASCII, a file name never depends on
/// how the file system or a tool treats other bytes, and two spellings of "café" (NFC, NFD)
/// are two files.
///
/// A 64-scalar name can take 768 characters encoded, and a file name at most 255 bytes
/// (NAME_MAX). An encoding longer than `maximumEncodedLength` is cut, at a scalar, and ends
/// with `~` and the SHA-256 of the whole name's UTF-8 (64 hex digits): two names that share
/// a file cannot be found, so saving one never writes over another. Such a file does not say
/// its name whole: the record in it does, and the file is that stopwatch's only if
/// `of(record.name)` is its name (`StopwatchFileReader`); a file there that records another
/// name is never replaced (`StateStore`).
///
/// Earlier releases ended a cut name with the 64-bit FNV-1a hash instead (16 hex digits),
/// which two crafted names can share. Their files still load (`legacyOf`) and are renamed to
/// `of` at the next start.
enum StopwatchFileName {
    /// Leaves room for `.json.tmp` and a leading `.` (temporary file), and for what moving a
    /// bad file aside appends (`.json.corrupt-YYYYMMDDTHHMMSSZ-NN`, 33), within NAME_MAX.
    static let maximumEncodedLength = 200

    /// How a cut name ends: `~` and the digest of the whole name, in uppercase hex.
    private enum Digest {
        case sha256
        /// Earlier releases'.
        case fnv1a

        /// `~` and the hex digits.
        var suffixLength: Int {
            switch self {
            case .sha256: 1 + 2 * SHA256.digestLength
            case .fnv1a: 17
            }
        }

        func of(_ name: String) -> [UInt8] {
            switch self {
            case .sha256: SHA256.digest(of: name.utf8)
            case .fnv1a: (0..<8).map { UInt8(truncatingIfNeeded: StopwatchFileName.fnv1a(name.utf8) >> UInt64(56 - 8 * $0)) }
            }
        }
    }

    static func of(_ name: String) -> String { "\(encoded(name)).json" }

    /// The file an earlier release kept `name` in, when it is not `of(name)`: a cut name's,
    /// hashed with FNV-1a. Nil for every other name (their files are named as they were).
    static func legacyOf(_ name: String) -> String? {
        let legacy = "\(encoded(name, digest: .fnv1a)).json"
        return legacy == of(name) ? nil : legacy
    }

    static func temporary(of name: String) -> String { ".\(encoded(name)).json.tmp" }

    /// The journal of `name`'s transitions since its file (`StopwatchJournal`): hidden, as a
    /// temporary file is, and not a `.tmp`: it is not a leftover while its file is there.
    static func journal(of name: String) -> String { ".\(encoded(name)).journal" }

    /// Whether `file` is named as a journal is.
    static func isJournal(_ file: String) -> Bool {
        file.hasPrefix(".") && file.hasSuffix(".journal")
    }

    /// Whether `file` is a temporary file: a leftover once no write is under way.
    static func isTemporary(_ file: String) -> Bool {
        file.hasPrefix(".") && file.hasSuffix(".tmp")
    }

    /// Whether `file` is named as a stopwatch's file is: the name it encodes is valid and
    /// encoded exactly so (or, cut and hashed, it has that form). Any other file, including
    /// those moved aside (`<file>.corrupt-…`), is not a stopwatch's.
    static func isStopwatchFile(_ file: String) -> Bool {
        guard file.hasSuffix(".json") else { return false }
        let stem = file.utf8.dropLast(".json".utf8.count)
        if stopwatchName(of: file) != nil { return true }
        // Cut and hashed: `<whole scalars encoded>~<64 hex digits>` (16 before SHA-256).
        guard stem.count <= maximumEncodedLength, let tilde = stem.lastIndex(of: UInt8(ascii: "~")),
            [Digest.sha256.suffixLength, Digest.fnv1a.suffixLength].contains(stem.distance(from: tilde, to: stem.endIndex)),
            stem[stem.index(after: tilde)...].allSatisfy(isUppercaseHexDigit),
            let prefix = decoded(stem[..<tilde]), !prefix.isEmpty
        else { return false }
        return String(validating: prefix, as: UTF8.self) != nil
    }

    /// The stopwatch `file` is named for, when its name says it whole; nil for any other file,
    /// and for a cut and hashed one (whose record says the name).
    static func stopwatchName(of file: String) -> String? {
        guard file.hasSuffix(".json") else { return nil }
        guard let bytes = decoded(file.utf8.dropLast(".json".utf8.count)),
            let name = String(validating: bytes, as: UTF8.self), StopwatchName.isValid(name),
            of(name).utf8.elementsEqual(file.utf8)
        else { return nil }
        return name
    }

    /// `name`, encoded and, when too long, cut and hashed.
    static func encoded(_ name: String) -> String {
        encoded(name, digest: .sha256)
    }

    private static func encoded(_ name: String, digest: Digest) -> String {
        var text: [UInt8] = []
        var cut = 0
        for scalar in name.unicodeScalars {
            if scalar.isASCII, isKeptAsIs(UInt8(scalar.value), first: text.isEmpty) {
                text.append(UInt8(scalar.value))
            } else {
                for byte in String(scalar).utf8 {
                    text.append(UInt8(ascii: "%"))
                    text.append(hexDigit(byte >> 4))
                    text.append(hexDigit(byte & 0xF))
                }
            }
            if text.count <= maximumEncodedLength - digest.suffixLength { cut = text.count }
        }
        if text.count > maximumEncodedLength {
            text.removeSubrange(cut...)
            text.append(UInt8(ascii: "~"))
            for byte in digest.of(name) {
                text.append(hexDigit(byte >> 4))
                text.append(hexDigit(byte & 0xF))
            }
        }
        return String(decoding: text, as: UTF8.self)
    }

    /// The bytes `encoded` stands for; nil if it is not percent-encoding as `encoded` writes
    /// it (a `%` without two uppercase hex digits, or a byte that should have been encoded).
    static func decoded<Bytes: Collection<UInt8>>(_ encoded: Bytes) -> [UInt8]? {
        var bytes: [UInt8] = []
        var index = encoded.startIndex
        while index != encoded.endIndex {
            let byte = encoded[index]
            index = encoded.index(after: index)
            if byte == UInt8(ascii: "%") {
                guard index != encoded.endIndex, let high = hexValue(encoded[index]) else { return nil }
                index = encoded.index(after: index)
                guard index != encoded.endIndex, let low = hexValue(encoded[index]) else { return nil }
                index = encoded.index(after: index)
                bytes.append(high << 4 | low)
            } else {
                guard isKeptAsIs(byte, first: bytes.isEmpty) else { return nil }
                bytes.append(byte)
            }
        }
        return bytes
    }

    /// 64-bit FNV-1a, which earlier releases named a cut name's file with: only to find those
    /// files (two names sharing it can be crafted).
    static func fnv1a(_ bytes: some Sequence<UInt8>) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in bytes {
            hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01B3
        }
        return hash
    }

    private static func isKeptAsIs(_ byte: UInt8, first: Bool) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "_"), UInt8(ascii: "-"):
            return true
        case UInt8(ascii: "."): return !first
        default: return false
        }
    }

    private static func hexDigit(_ value: UInt8) -> UInt8 {
        value < 10 ? UInt8(ascii: "0") + value : UInt8(ascii: "A") + value - 10
    }

    private static func isUppercaseHexDigit(_ byte: UInt8) -> Bool { hexValue(byte) != nil }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
