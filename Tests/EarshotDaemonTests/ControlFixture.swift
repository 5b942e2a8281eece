@testable import ControlProtocol
import EarshotDaemon
import Foundation
import PipeWireTestSupport

/// A control server on an in-memory daemon, in a runtime directory of its own (XDG_RUNTIME_DIR
/// style, mode 0700), removed afterwards. `traversable` makes the runtime directory and the
/// socket's directory 0711, for a test that connects as another user.
struct ControlFixture {
    let root: URL
    let control: InMemoryDaemonControl
    let server: ControlServer

    var socketPath: String { server.path }

    static func with<Result>(
        limits: ControlLimits = ControlLimits(), traversable: Bool = false,
        _ body: (ControlFixture) async throws -> Result
    ) async throws -> Result {
        // Another user must be able to traverse every parent: /tmp, not a TMPDIR under /root.
        let base = traversable ? URL(fileURLWithPath: "/tmp") : FileManager.default.temporaryDirectory
        let root = base.appendingPathComponent("earshot-control-\(UUID().uuidString.prefix(8))")
        let mode = traversable ? 0o711 : 0o700
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true, attributes: [.posixPermissions: mode])
        defer { try? FileManager.default.removeItem(at: root) }
        let control = InMemoryDaemonControl()
        let path = ControlSocketPath.default(environment: ["XDG_RUNTIME_DIR": root.path])
        if traversable {
            try FileManager.default.createDirectory(
                atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true, attributes: [.posixPermissions: mode])
        }
        let server = try await ControlServer.start(path: path, control: control, limits: limits)
        let fixture = ControlFixture(root: root, control: control, server: server)
        do {
            let result = try await body(fixture)
            await server.close()
            return result
        } catch {
            await server.close()
            throw error
        }
    }
}
