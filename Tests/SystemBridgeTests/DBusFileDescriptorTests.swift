import Foundation
import SystemBridge
import SystemPackage
import TestScheduling
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Unix fd passing (`h`) through the sd-bus binding: what BlueZ's Profile1.NewConnection needs.
@Suite("D-Bus file descriptors", .timeLimit(.minutes(1)), .blockingCalls)
struct DBusFileDescriptorTests {
    @Test("a DBusFileDescriptor owns a duplicate, gives it up once through take(), and closes it otherwise")
    func ownership() throws {
        let (near, far) = try unixSocketPair(Int32(SOCK_STREAM.rawValue))
        defer { _ = try? near.close(); _ = try? far.close() }
        let inode = try socketInode(near)
        do {
            let kept = try DBusFileDescriptor(duplicating: near.rawValue)
            #expect(descriptorsOpen(onSocket: inode) == 2)
            let other = try DBusFileDescriptor(duplicating: near.rawValue)
            #expect(kept == kept && kept != other)  // equal only to itself
            #expect(!kept.isTaken && descriptorsOpen(onSocket: inode) == 3)
        }
        #expect(descriptorsOpen(onSocket: inode) == 1)  // deinit closed both duplicates
        let moved = try DBusFileDescriptor(duplicating: near.rawValue)
        let taken = try #require(moved.take())
        #expect(moved.take() == nil && moved.isTaken)
        #expect(DBusValue.fileDescriptor(moved).signature == "h")
        _ = consume moved
        #expect(descriptorsOpen(onSocket: inode) == 2)  // the taken one is the caller's now
        try taken.close()
        #expect(descriptorsOpen(onSocket: inode) == 1)
    }

    @Test("Profile1.NewConnection's 'oha{sv}': the exported handler takes the fd and writes through it; nothing leaks")
    func newConnectionRoundTrip() async throws {
        let (near, far) = try unixSocketPair(Int32(SOCK_STREAM.rawValue))
        defer { _ = try? far.close() }
        let inode = try socketInode(near)
        try await withPrivateBus { bus, _ in
            let profile = try DBusConnection(.address(bus.address))
            let bluez = try DBusConnection(.address(bus.address))
            defer { bluez.close(); profile.close() }
            #expect(try await profile.canPassFileDescriptors())
            #expect(try await bluez.canPassFileDescriptors())
            try await profile.requestName("org.earshot.TestProfile")
            try await profile.exportObject(path: "/org/earshot/profile") { call in
                guard call.member == "NewConnection", call.signature == "oha{sv}",
                      case .objectPath(let device) = call.arguments[0],
                      let handed = call.arguments[1].fileDescriptor?.take()
                else { return call.reply.fail(name: "org.bluez.Error.Rejected", message: "unexpected \(call.signature)") }
                // The handler owns the socket now: as the daemon would hand it to a BluetoothChannel.
                let channel = BluetoothChannel(adopting: handed, kind: .stream, peer: device)
                do throws(BluetoothError) {
                    try channel.send(Array("hello \(device)".utf8))
                    channel.close()
                    call.reply()
                } catch {
                    call.reply.fail(name: "org.bluez.Error.Failed", message: "\(error)")
                }
            }
            do {
                let passed = try DBusFileDescriptor(duplicating: near.rawValue)
                try near.close()  // the message's copy keeps the socket alive
                let reply = try await bluez.call(
                    destination: "org.earshot.TestProfile", path: "/org/earshot/profile", interface: "org.bluez.Profile1",
                    member: "NewConnection",
                    [.objectPath("/org/bluez/hci0/dev_AA_BB_CC_DD_EE_FF"), .fileDescriptor(passed), .properties(["Version": .uint16(0x0102)])])
                #expect(reply.isEmpty)
                #expect(!passed.isTaken)  // sending appended a duplicate; the caller's value keeps its own
            }
            let received = try receiveRaw(far)
            #expect(String(decoding: received, as: UTF8.self) == "hello /org/bluez/hci0/dev_AA_BB_CC_DD_EE_FF")
            // Every copy (ours, both messages', the handler's) is closed once the buses are.
            bluez.close()
            profile.close()
            #expect(descriptorsOpen(onSocket: inode) == 0)
            #expect(try receiveRaw(far).isEmpty)  // and so the peer sees the end
        }
    }

    @Test("a descriptor already taken cannot be sent: the call fails instead of sending a closed number")
    func takenCannotBeSent() async throws {
        let (near, far) = try unixSocketPair(Int32(SOCK_STREAM.rawValue))
        defer { _ = try? far.close() }
        try await withPrivateBus { bus, _ in
            let client = try DBusConnection(.address(bus.address))
            defer { client.close() }
            let value = DBusFileDescriptor(adopting: near)
            try #require(value.take()).close()
            await #expect(throws: DBusError.self) {
                _ = try await client.call(destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus",
                                          interface: "org.freedesktop.DBus", member: "GetId", [.fileDescriptor(value)])
            }
        }
    }
}
