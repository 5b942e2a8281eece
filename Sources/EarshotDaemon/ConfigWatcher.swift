import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Calls `onChange` when one of `paths` is written, created, replaced (editors rename over
/// the file) or deleted, and on SIGHUP. inotify on each file's directory, read by one thread
/// blocked in read(2): no polling.
public final class ConfigWatcher: @unchecked Sendable {
    private let inotify: Int32
    private let signalSource: DispatchSourceSignal
    private let thread: Thread

    public init(paths: [String], onChange: @escaping @Sendable (String) -> Void) {
        inotify = inotify_init1(Int32(IN_CLOEXEC))
        var watched: [Int32: (directory: String, names: Set<String>)] = [:]
        for path in paths {
            let directory = (path as NSString).deletingLastPathComponent
            let name = (path as NSString).lastPathComponent
            let mask = UInt32(IN_CLOSE_WRITE | IN_MOVED_TO | IN_CREATE | IN_DELETE)
            let descriptor = inotify_add_watch(inotify, directory, mask)
            guard descriptor >= 0 else { continue }  // the directory does not exist (yet)
            watched[descriptor, default: (directory, [])].names.insert(name)
        }
        let fd = inotify
        let table = watched
        thread = Thread {
            var buffer = [UInt8](repeating: 0, count: 8192)
            while true {
                let count = read(fd, &buffer, buffer.count)
                if count <= 0 { if errno == EINTR { continue } else { return } }
                var offset = 0
                var changed: String?
                while offset + MemoryLayout<inotify_event>.size <= count {
                    let (descriptor, length, name) = buffer.withUnsafeBytes { raw -> (Int32, Int, String) in
                        let event = raw.load(fromByteOffset: offset, as: inotify_event.self)
                        let nameStart = offset + MemoryLayout<inotify_event>.size
                        let nameBytes = raw[nameStart..<(nameStart + Int(event.len))].prefix { $0 != 0 }
                        return (event.wd, Int(event.len), String(decoding: nameBytes, as: UTF8.self))
                    }
                    if let entry = table[descriptor], entry.names.contains(name) { changed = "\(entry.directory)/\(name)" }
                    offset += MemoryLayout<inotify_event>.size + length
                }
                if let changed { onChange("\(changed) changed") }
            }
        }
        thread.name = "earshot-config-watch"
        thread.start()
        signal(SIGHUP, SIG_IGN)
        signalSource = DispatchSource.makeSignalSource(signal: SIGHUP, queue: .global())
        signalSource.setEventHandler { onChange("SIGHUP") }
        signalSource.resume()
    }

    /// Stops watching; the reader thread ends when its descriptor closes.
    public func stop() {
        signalSource.cancel()
        close(inotify)
    }
}
