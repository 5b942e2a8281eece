import Foundation
@testable import SystemBridge
import SystemPackage
import TestScheduling
import Testing
#if canImport(Glibc)
import Glibc
#endif

@Suite("Bluetooth socket address", .blockingCalls)
struct BluetoothSocketAddressTests {
    @Test("AA:BB:CC:DD:EE:FF parses in either case; the kernel's bytes are the reverse")
    func parsesAndReverses() throws {
        let address = try BluetoothSocketAddress("a1:B2:c3:D4:e5:F6")
        #expect(address.bytes == [0xA1, 0xB2, 0xC3, 0xD4, 0xE5, 0xF6])
        #expect(address.kernelBytes == [0xF6, 0xE5, 0xD4, 0xC3, 0xB2, 0xA1])
        #expect(address.description == "A1:B2:C3:D4:E5:F6")
        #expect(try BluetoothSocketAddress("00:00:00:00:00:00").kernelBytes == [0, 0, 0, 0, 0, 0])
    }

    @Test("anything else is refused with a readable error", arguments: [
        "", "AA:BB:CC:DD:EE", "AA:BB:CC:DD:EE:FF:00", "AA-BB-CC-DD-EE-FF", "AABBCCDDEEFF", " AA:BB:CC:DD:EE:FF",
        "AA:BB:CC:DD:EE:FF ", "GG:BB:CC:DD:EE:FF", "AA:BB:CC:DD:EE:F", "A:BB:CC:DD:EE:FFF", "AA:BB:CC:DD:EE;FF",
        "/org/bluez/hci0/dev_AA_BB_CC_DD_EE_FF", "+A:BB:CC:DD:EE:FF",
    ])
    func refuses(_ text: String) {
        #expect {
            try BluetoothSocketAddress(text)
        } throws: { error in
            guard let error = error as? BluetoothError, error.kind == .invalidAddress, error.systemError == nil else { return false }
            return error.description == "'\(text)' is not a Bluetooth address (expected six hex pairs like AA:BB:CC:DD:EE:FF)"
        }
    }
}

@Suite("Bluetooth errors", .blockingCalls)
struct BluetoothErrorTests {
    @Test("errnos are classified so a caller can say what to do")
    func classification() {
        #expect(BluetoothError.kind(of: .addressFamilyNotSupported) == .bluetoothUnavailable)
        for errno: Errno in [.resourceBusy, .addressInUse, .connectionRefused] {
            #expect(BluetoothError.kind(of: errno) == .channelBusy, "\(errno)")
        }
        for errno: Errno in [.hostIsDown, .timedOut, .noRouteToHost] {
            #expect(BluetoothError.kind(of: errno) == .deviceUnreachable, "\(errno)")
        }
        #expect(BluetoothError.kind(of: .connectionReset) == .disconnected)
        #expect(BluetoothError.kind(of: .permissionDenied) == .notPermitted)
        #expect(BluetoothError.kind(of: .noSuchFileOrDirectory) == .other)
        let busy = BluetoothError(SystemError("connect", errno: .resourceBusy), peer: "AA:BB:CC:DD:EE:FF PSM 0x1001")
        #expect(busy.description == "AA:BB:CC:DD:EE:FF PSM 0x1001 is busy: another program (e.g. LibrePods) probably holds the channel (connect: Device or resource busy (EBUSY))")
        let none = BluetoothError(SystemError("socket", detail: "AF_BLUETOOTH", errno: .addressFamilyNotSupported), peer: "x")
        #expect(none.description.hasPrefix("this kernel has no Bluetooth sockets (AF_BLUETOOTH)"))
    }
}

@Suite("Bluetooth channel", .timeLimit(.minutes(1)), .blockingCalls)
struct BluetoothChannelTests {
    @Test("a SEQPACKET socket adopted as .packets keeps packet boundaries both ways; the peer's close ends the stream once")
    func packets() async throws {
        let (near, far) = try unixSocketPair(Int32(SOCK_SEQPACKET.rawValue))
        // Closed once: a second close would hit whatever descriptor took the number (another
        // test's PipeWire loop, seen as a hung run).
        var farClosed = false
        defer { if !farClosed { _ = try? far.close() } }
        let channel = BluetoothChannel(adopting: near, kind: .packets, peer: "test packets")
        defer { channel.close() }
        var events = try channel.incoming(threadName: "bt-test-pkt").makeAsyncIterator()
        // One write, one event, as it arrives (the iterator waits; nothing polls).
        try sendRaw(far, [0x04, 0x00])
        #expect(await events.next() == .received([0x04, 0x00]))
        try sendRaw(far, [0x01])
        #expect(await events.next() == .received([0x01]))
        // A burst keeps its boundaries.
        for packet: [UInt8] in [[1], [2, 3], [4, 5, 6], Array(repeating: 7, count: 300)] { try sendRaw(far, packet) }
        #expect(await events.next() == .received([1]))
        #expect(await events.next() == .received([2, 3]))
        #expect(await events.next() == .received([4, 5, 6]))
        #expect(await events.next() == .received(Array(repeating: 7, count: 300)))
        // A packet longer than one read is cut at maximumRead.
        try sendRaw(far, Array(repeating: 9, count: BluetoothChannel.maximumRead + 100))
        #expect(await events.next() == .received(Array(repeating: 9, count: BluetoothChannel.maximumRead)))
        // Sending: each send is one packet, however small.
        try channel.send([0xAA, 0xBB, 0xCC])
        try channel.send([0x01])
        #expect(try receiveRaw(far) == [0xAA, 0xBB, 0xCC])
        #expect(try receiveRaw(far) == [0x01])
        // The device goes away: one end, then the stream finishes.
        try far.close()
        farClosed = true
        #expect(await events.next() == .ended(nil))
        #expect(await events.next() == nil)
    }

    @Test("a stream socket adopted as .stream delivers each write as it comes and every byte sent")
    func stream() async throws {
        let (near, far) = try unixSocketPair(Int32(SOCK_STREAM.rawValue))
        // Closed once: a second close would hit whatever descriptor took the number (another
        // test's PipeWire loop, seen as a hung run).
        var farClosed = false
        defer { if !farClosed { _ = try? far.close() } }
        let channel = BluetoothChannel(adopting: near, kind: .stream, peer: "test stream")
        defer { channel.close() }
        var events = try channel.incoming(threadName: "bt-test-str").makeAsyncIterator()
        for message in ["hello", "buds", "wear state"] {
            try sendRaw(far, Array(message.utf8))
            #expect(await events.next() == .received(Array(message.utf8)))
        }
        let long = (0..<20_000).map { UInt8(truncatingIfNeeded: $0) }
        try channel.send(long)
        var echoed: [UInt8] = []
        while echoed.count < long.count { echoed += try receiveRaw(far) }
        #expect(echoed == long)
        try far.close()
        farClosed = true
        #expect(await events.next() == .ended(nil))
        #expect(await events.next() == nil)
    }

    @Test("a send that finds no room gives up at its deadline instead of blocking")
    func sendDeadline() throws {
        let (near, far) = try unixSocketPair(Int32(SOCK_STREAM.rawValue))
        defer { _ = try? far.close() }
        let channel = BluetoothChannel(adopting: near, kind: .stream, peer: "stuck peer")
        defer { channel.close() }
        let started = ContinuousClock.now
        #expect {
            try channel.send(Array(repeating: 0, count: 8 << 20), timeout: .milliseconds(200))
        } throws: { error in
            (error as? BluetoothError)?.systemError?.errno == .timedOut && (error as? BluetoothError)?.kind == .deviceUnreachable
        }
        // Only a guard against blocking for ever: the deadline is what the error says.
        #expect(ContinuousClock.now - started < .seconds(60))
    }

    @Test("stop while idle returns promptly, leaves no thread and reports no end; a closed channel refuses to send")
    func stopWhileIdle() async throws {
        let (near, far) = try unixSocketPair(Int32(SOCK_SEQPACKET.rawValue))
        defer { _ = try? far.close() }
        let inode = try socketInode(near)
        let channel = BluetoothChannel(adopting: near, kind: .packets, peer: "idle")
        var events = try channel.incoming(threadName: "bt-test-idle").makeAsyncIterator()
        // One packet through, so the reader thread is surely running (and has named itself).
        try sendRaw(far, [1])
        #expect(await events.next() == .received([1]))
        let reader = firstThreadID(named: "bt-test-idle")
        #expect(reader != nil)
        // Now idle in poll.
        // The reader sleeps in poll without a timeout: close returning at all shows it was woken
        // (a hang fails the time limit; a bound in seconds is a loaded machine's to miss).
        channel.close()
        #expect(threadEnded(reader))
        // Closed by its owner: the stream finishes without an `.ended`.
        #expect(await events.next() == nil)
        #expect(descriptorsOpen(onSocket: inode) == 0)
        channel.close()  // idempotent
        #expect {
            try channel.send([1])
        } throws: { error in
            (error as? BluetoothError)?.systemError?.errno == .badFileDescriptor
        }
    }

    @Test("a reader whose peer closed ends its thread by itself; close afterwards only joins it")
    func endEndsTheThread() async throws {
        let (near, far) = try unixSocketPair(Int32(SOCK_STREAM.rawValue))
        let channel = BluetoothChannel(adopting: near, kind: .stream, peer: "gone")
        defer { channel.close() }
        var events = try channel.incoming(threadName: "bt-test-end").makeAsyncIterator()
        try far.close()
        #expect(await events.next() == .ended(nil))
        #expect(await events.next() == nil)
        // Its first-born thread of that name, if it has not ended yet (the reader named itself
        // before it read anything).
        let reader = firstThreadID(named: "bt-test-end")
        // The thread returned after reporting; close() joins it at once.
        // The reader sleeps in poll without a timeout: close returning at all shows it was woken
        // (a hang fails the time limit; a bound in seconds is a loaded machine's to miss).
        channel.close()
        #expect(reader == nil || threadEnded(reader))
    }

    @Test("a read that fails is reported once as the end, with the error, and the reader stops")
    func readErrorEnds() async throws {
        // A pipe is readable but not a socket: recv fails with ENOTSOCK, as a broken link
        // fails with ECONNRESET.
        var ends: [Int32] = [-1, -1]
        #expect(pipe(&ends) == 0)
        let writer = FileDescriptor(rawValue: ends[1])
        defer { _ = try? writer.close() }
        let channel = BluetoothChannel(adopting: FileDescriptor(rawValue: ends[0]), kind: .stream, peer: "a pipe")
        defer { channel.close() }
        var events = try channel.incoming(threadName: "bt-test-err").makeAsyncIterator()
        _ = try writer.writeAll([1, 2, 3])
        let end = await events.next()
        guard case .ended(let error?) = end else { Issue.record("expected an end with an error, got \(String(describing: end))"); return }
        #expect(error.systemError?.call == "recv" && error.systemError?.errno == .notSocket)
        #expect(error.description.hasPrefix("a pipe: recv: "), "\(error)")
        #expect(await events.next() == nil)
    }

    @Test("connecting here either works or fails with a typed error: 'no Bluetooth' when the kernel has none")
    func connectOnThisMachine() throws {
        // Whether this kernel has Bluetooth sockets, asked directly.
        let probe = socket(AF_BLUETOOTH, Int32(SOCK_SEQPACKET.rawValue), 0)
        let probeErrno = errno
        if probe >= 0 { Glibc.close(probe) }
        let kernelHasBluetooth = probe >= 0
        func check(_ error: BluetoothError) {
            if kernelHasBluetooth {
                // No adapter, device off, refused: any classified failure but a parse error.
                #expect(error.kind != .invalidAddress, "\(error)")
                #expect(error.systemError != nil, "\(error)")
            } else {
                #expect(probeErrno == EAFNOSUPPORT)
                #expect(error.kind == .bluetoothUnavailable, "\(error)")
                #expect(error.systemError?.call == "socket")
                #expect(error.description.hasPrefix("this kernel has no Bluetooth sockets (AF_BLUETOOTH)"), "\(error)")
            }
        }
        do throws(BluetoothError) {
            try BluetoothChannel.connectL2CAP(to: "00:11:22:33:44:55", psm: 0x1001, timeout: .seconds(2)).close()
        } catch { check(error) }
        do throws(BluetoothError) {
            try BluetoothChannel.connectRFCOMM(to: "00:11:22:33:44:55", channel: 27, timeout: .seconds(2)).close()
        } catch { check(error) }
        // A bad address is refused before any socket is made.
        #expect(throws: BluetoothError.invalidAddress("00:11:22:33:44")) {
            try BluetoothChannel.connectL2CAP(to: "00:11:22:33:44", psm: 0x1001)
        }
    }
}
