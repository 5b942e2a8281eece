import Foundation

/// Where a JSON text first breaks, as `line L, column C`. JSONDecoder on Linux does not say;
/// JSONSerialization reports a character offset (or the end of the file), which this turns into
/// a line and column.
public enum JSONSyntaxLocation {
    public static func locate(_ data: Data) -> String? {
        do {
            _ = try JSONSerialization.jsonObject(with: data, options: [.fragmentsAllowed])
            return nil
        } catch {
            let text = "\((error as NSError).userInfo[NSDebugDescriptionErrorKey] ?? error)"
            let bytes = [UInt8](data)
            let offset: Int
            if let range = text.range(of: #"character \d+"#, options: .regularExpression),
                let number = Int(text[range].dropFirst("character ".count))
            {
                offset = min(number, bytes.count)
            } else if text.localizedCaseInsensitiveContains("end of file") {
                offset = bytes.count
            } else {
                return nil
            }
            let before = bytes[..<offset]
            let line = before.count { $0 == 0x0A } + 1
            let column = offset - (before.lastIndex(of: 0x0A).map { $0 + 1 } ?? 0) + 1
            return "line \(line), column \(column)"
        }
    }
}
