import CEarshotLinux
import SystemPackage
#if canImport(Glibc)
import Glibc
#endif

extension BluetoothChannel {
    /// Connects an L2CAP SEQPACKET channel to `address` (`AA:BB:CC:DD:EE:FF`) on `psm` (AAP:
    /// 0x1001). The connect is non-blocking and waited for at most `timeout`, so a device that
    /// is off cannot hang the calling thread. Blocks the calling thread for that long at most.
    public static func connectL2CAP(to address: String, psm: UInt16, timeout: Duration = .seconds(10)) throws(BluetoothError) -> BluetoothChannel {
        let device = try BluetoothSocketAddress(address)
        let peer = "\(device) PSM 0x\(String(psm, radix: 16, uppercase: true))"
        return try connect(peer: peer, kind: .packets, timeout: timeout, open: CEarshotLinux_l2cap_socket) { fd in
            device.kernelBytes.withUnsafeBufferPointer { CEarshotLinux_l2cap_connect(fd, $0.baseAddress, psm) }
        }
    }

    /// Connects an RFCOMM stream to `address` on `channel` (1…30); as `connectL2CAP`.
    public static func connectRFCOMM(to address: String, channel: UInt8, timeout: Duration = .seconds(10)) throws(BluetoothError) -> BluetoothChannel {
        let device = try BluetoothSocketAddress(address)
        let peer = "\(device) RFCOMM channel \(channel)"
        return try connect(peer: peer, kind: .stream, timeout: timeout, open: CEarshotLinux_rfcomm_socket) { fd in
            device.kernelBytes.withUnsafeBufferPointer { CEarshotLinux_rfcomm_connect(fd, $0.baseAddress, channel) }
        }
    }

    private static func connect(
        peer: String, kind: Kind, timeout: Duration, open: () -> Int32, connect: (Int32) -> Int32
    ) throws(BluetoothError) -> BluetoothChannel {
        let raw = open()
        guard raw >= 0 else { throw BluetoothError(SystemError("socket", detail: "AF_BLUETOOTH", errno: .current), peer: peer) }
        // Owns the descriptor from here: a throw below closes it.
        let channel = BluetoothChannel(adopting: FileDescriptor(rawValue: raw), kind: kind, peer: peer)
        if connect(raw) != 0 {
            let error = Errno.current
            // EINTR: the connection goes on in the background, as EINPROGRESS says.
            guard error == .nowInProgress || error == .interrupted || error == .wouldBlock else {
                throw BluetoothError(SystemError("connect", errno: error), peer: peer)
            }
            try waitUntilConnected(raw, peer: peer, timeout: timeout)
        }
        return channel
    }

    /// Waits until the non-blocking connect finished (writable), then reads its outcome.
    private static func waitUntilConnected(_ fd: Int32, peer: String, timeout: Duration) throws(BluetoothError) {
        let deadline = ContinuousClock.now + timeout
        while true {
            var entry = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
            let ready = poll(&entry, 1, Readiness.milliseconds(deadline - ContinuousClock.now))
            if ready < 0, Errno.current == .interrupted { continue }
            if ready < 0 { throw BluetoothError(SystemError("poll", errno: .current), peer: peer) }
            if ready == 0 {
                throw BluetoothError(SystemError("connect", detail: "no answer within \(timeout)", errno: .timedOut), peer: peer)
            }
            if let error = pendingError(fd) { throw BluetoothError(SystemError("connect", errno: error), peer: peer) }
            return
        }
    }
}

extension BluetoothChannel {
    /// Connects to a Unix socket at `path` that stands in for a device's channel (SEQPACKET for
    /// `.packets`, STREAM for `.stream`): `earshot daemon --bluetooth-loopback DIR` uses this so
    /// the drivers can be driven with no radio, by tests and by protocol work. A refused or
    /// missing socket classifies like the radio's (`channelBusy`, `deviceUnreachable`).
    public static func connectLoopback(path: String, kind: Kind) throws(BluetoothError) -> BluetoothChannel {
        let peer = "loopback \(path)"
        var address: sockaddr_un
        do { address = try unixSocketAddress(path) } catch { throw BluetoothError(error, peer: peer) }
        let type = kind == .packets ? Int32(SOCK_SEQPACKET.rawValue) : Int32(SOCK_STREAM.rawValue)
        let raw = Glibc.socket(AF_UNIX, type | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard raw >= 0 else { throw BluetoothError(SystemError("socket", path: path, errno: .current), peer: peer) }
        let channel = BluetoothChannel(adopting: FileDescriptor(rawValue: raw), kind: kind, peer: peer)
        let result = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(raw, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard result == 0 else {
            let error = Errno.current
            // No socket file: nothing there to connect to, as a device out of range.
            let kind: BluetoothError.Kind = error == .noSuchFileOrDirectory ? .deviceUnreachable : BluetoothError.kind(of: error)
            throw BluetoothError(kind: kind, peer: peer, systemError: SystemError("connect", path: path, errno: error))
        }
        return channel
    }
}
