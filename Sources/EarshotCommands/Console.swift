import SystemPackage

/// Standard output and standard error, written whole (swift-system's `writeAll`: a short write or
/// EINTR goes on). A closed pipe (EPIPE: `earshot watch | head`) is left to the caller's next
/// step, as FileHandle did.
enum Console {
    static func output(_ text: String) { write(Array(text.utf8), to: .standardOutput) }
    static func error(_ text: String) { write(Array(text.utf8), to: .standardError) }
    static func output(bytes: some Sequence<UInt8>) { write(Array(bytes), to: .standardOutput) }

    private static func write(_ bytes: [UInt8], to descriptor: FileDescriptor) {
        guard !bytes.isEmpty else { return }
        _ = try? descriptor.writeAll(bytes)
    }
}
