import SystemBridge
import TestScheduling
import Testing

@Suite("the relocation table given back", .blockingCalls)
struct RelocationTableTests {
    @Test("this test program's relocation table (a PIE's, in a read-only segment) is given back in whole pages, again harmlessly, and the program runs on")
    func releasesWholePages() throws {
        let released = try CurrentProcess.releaseRelocationTable()
        #expect(released > 0)
        #expect(released % 4096 == 0)
        // A second time finds the same table: its pages fault back in from the file if read.
        #expect(try CurrentProcess.releaseRelocationTable() == released)
        // What the relocations set up (metadata, witness tables, dynamic casts) still works.
        let values: [any Sendable] = [1, "two", 3.0]
        #expect(values.compactMap { $0 as? any CustomStringConvertible }.map(\.description) == ["1", "two", "3.0"])
    }
}
