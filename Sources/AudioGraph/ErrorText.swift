import FoundationEssentials
import SystemPackage

/// An error in the C library's words (`No such file or directory`, `Permission denied`), never
/// a Cocoa code: the errno behind a Foundation file error, else the error itself.
public enum ErrorText {
    public static func describe(_ error: any Error) -> String {
        if let posix = error as? POSIXError { return describe(errno: posix.code.rawValue) }
        if let cocoa = error as? CocoaError {
            if let posix = cocoa.underlying as? POSIXError { return describe(errno: posix.code.rawValue) }
            switch cocoa.code {
            case .fileReadNoSuchFile, .fileNoSuchFile: return Errno.noSuchFileOrDirectory.description
            case .fileReadNoPermission, .fileWriteNoPermission: return Errno.permissionDenied.description
            default: break
            }
        }
        return "\(error)"
    }

    public static func describe(errno code: Int32) -> String { Errno(rawValue: code).description }
}
