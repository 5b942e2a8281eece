import FoundationEssentials

/// Where a JSON text first breaks, as `line L, column C` (columns count bytes). JSONDecoder on
/// Linux does not say; the project's own scanner (`JSONScanner`, the pw-dump reader) stops at
/// the first byte that is not JSON, and that byte is placed here.
public enum JSONSyntaxLocation {
    public static func locate(_ data: Data) -> String? {
        data.withUnsafeBytes { bytes -> String? in
            var scanner = JSONScanner(bytes)
            do throws(JSONScanner.Failure) {
                try scanner.skipValue()
                scanner.skipWhitespace()
                guard scanner.atEnd else { return JSONScanner.location(of: scanner.offset, in: bytes) }
                return nil
            } catch {
                return JSONScanner.location(of: error.offset, in: bytes)
            }
        }
    }
}
