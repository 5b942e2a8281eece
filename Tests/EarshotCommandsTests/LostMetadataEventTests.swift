import AudioGraph
import Foundation
import PipeWireTestSupport
import TestScheduling
import Testing

@testable import SystemBridge

/// Issue 28's last failure kind ("(the pick) no route-change event", cooperative): a pick made
/// while another client's bind of the `default` metadata was pending never reached the daemon
/// (PipeWire's metadata module passes changes only to pending bindings then;
/// `PipeWireConnection.rereadMetadata` says where). `wpctl set-default` binds the metadata twice
/// and writes once the first is answered, so its own pick can race its second bind. Here a
/// client makes that race deterministic — its pick and a bind in one flush — and goes, as
/// wpctl does. WirePlumber's answer (the effective default moving to the pick) does reach the
/// daemon; before the fix the daemon took that for WirePlumber's own move and wrote its old
/// decision over the pick, undoing it. Now it reads the metadata afresh before applying
/// anything, finds the pick and follows it.
@Suite("A pick PipeWire did not pass on", .serialized, .timeLimit(.minutes(2)), .blockingCalls)
struct LostMetadataEventTests {
    typealias D = DaemonFixture

    @Test("cooperative: a pick lost to the daemon's binding is read afresh when WirePlumber moves the default to it, followed as the user's, never written over")
    func lostPickIsFollowedAfterTheClientGoes() async throws {
        try await withSandbox(.init(wirePlumber: true, sinks: [.speakers(), .headphones()])) { sandbox in
            let daemon = try D.start(in: sandbox)
            defer { daemon.process.stop() }
            let current = try await daemon.settle(try DaemonSession(path: daemon.socketPath), timeout: .seconds(20))
            let pick = current == D.speakers ? D.headphones : D.speakers
            let picker = try await PipeWireConnection.connect(remote: sandbox.socketPath, applicationName: "picker")
            var pickerOpen = true
            defer { if pickerOpen { picker.close() } }
            let graph = try await picker.waitUntil("the default metadata", timeout: .seconds(20)) { $0.defaultMetadata != nil }
            let id = try #require(graph.defaultMetadata?.id)
            // A configured default, as on any desktop where someone once picked one (WirePlumber
            // keeps it): the decided sink, written as a user would (not lost: no bind races it).
            try await picker.setMetadata(
                "default", subject: 0, key: Graph.configuredSinkKey, type: "Spa:String:JSON", value: MetadataEntry.json(name: current))
            _ = try await sandbox.observer.waitUntil("the decided sink configured", timeout: .seconds(10)) { $0.configuredDefaultSinkName == current }
            let events = try EventSubscription(socket: daemon.socketPath)
            // The pick and a second bind in one flush, as wpctl's can come.
            let reread = try picker.loop.withLock { () throws(PipeWireError) -> MetadataReread? in
                _ = try picker.writeMetadata(
                    "default", subject: 0, key: Graph.configuredSinkKey, type: "Spa:String:JSON", value: MetadataEntry.json(name: pick))
                return try picker.beginReread(id: id)
            }
            _ = try await picker.finishReread(try #require(reread), timeout: .seconds(30))
            picker.close()
            pickerOpen = false
            let followed: JSONValue
            do {
                followed = try await events.next("route-change") { $0["current"] == .string(pick) }
            } catch {
                let seen = sandbox.observer.snapshot()
                throw FixtureError("\(error); decided \(current), picked \(pick), the observer sees configured \(seen.configuredDefaultSinkName ?? "-") effective \(seen.effectiveDefaultSinkName ?? "-")\n\(daemon.process.logTail(lines: 200))")
            }
            #expect(followed["reason"] == .string("user-override"), "\(followed)")
            // The pick holds: the daemon did not write its old decision back (a new binding
            // reads the metadata as it is).
            let checker = try await PipeWireConnection.connect(remote: sandbox.socketPath, applicationName: "checker")
            defer { checker.close() }
            let truth = try await checker.waitUntil("the default metadata", timeout: .seconds(20)) { $0.defaultMetadata != nil }
            #expect(truth.configuredDefaultSinkName == pick)
            // The daemon's binding had missed it: it says so, once per reread that found something.
            try await daemon.process.waitForLog(containing: "PipeWire did not pass on, read afresh")
        }
    }
}
