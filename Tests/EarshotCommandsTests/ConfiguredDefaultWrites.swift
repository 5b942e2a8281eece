import AudioGraph
import SystemBridge

/// Every value of `default.configured.audio.sink` (or another key) PipeWire reports from now on, seen from a
/// connection of its own: what a test asserts "nothing (else) was written" with.
struct ConfiguredDefaultWrites {
    private let connection: PipeWireConnection
    private let names: Task<[String], Never>

    static func start(remote: String, key: String = Graph.configuredSinkKey) async throws -> ConfiguredDefaultWrites {
        let connection = try await PipeWireConnection.connect(remote: remote)
        let names = Task { () -> [String] in
            var names: [String] = []
            var ready = false
            for await batch in connection.events {
                for event in batch {
                    if case .ready = event { ready = true }
                    if ready, case .changed(.metadataProperty(_, 0, let changed?, _, let value?)) = event, changed == key,
                        let name = MetadataEntry.name(inJSON: value)
                    { names.append(name) }
                }
            }
            return names
        }
        try await connection.sync()
        return ConfiguredDefaultWrites(connection: connection, names: names)
    }

    /// Waits for everything written so far to arrive, stops watching and returns the values.
    func stop() async throws -> [String] {
        try await connection.sync()
        try await connection.sync()
        connection.close()
        return await names.value
    }
}
