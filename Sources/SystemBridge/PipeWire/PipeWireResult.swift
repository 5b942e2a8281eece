import SystemPackage

/// The one place an `int` result of libpipewire is checked. PipeWire's convention: 0 or a
/// positive value (a sequence number, an async id) is success; a negative one is `-errno`.
/// These calls return their error, they do not set errno, so errno is never read after them.
/// Returns the result, for the calls whose positive value means something (`pw_core_sync`'s
/// sequence number).
@discardableResult
func check(_ result: Int32, _ operation: @autoclosure () -> String) throws(PipeWireError) -> Int32 {
    guard result < 0 else { return result }
    throw PipeWireError.requestFailed(operation: operation(), code: result, message: "returned -\(Errno(rawValue: -result).symbolicName)")
}

/// Where a result has nowhere to go (a callback on the loop thread, a teardown): the failure as
/// a value, so the caller decides what it means instead of dropping it.
func checked(_ result: Int32, _ operation: @autoclosure () -> String) -> PipeWireError? {
    do {
        try check(result, operation())
        return nil
    } catch {
        return error
    }
}
