@testable import SystemBridge
import Testing

@Suite("Resident code pages")
struct ResidentCodeTests {
    static let smaps = """
        55e987281000-55e988e95000 r-xp 00000000 fe:00 16286596                   /usr/bin/earshot
        Size:              28752 kB
        Rss:               17996 kB
        Anonymous:             0 kB
        55e988e95000-55e988f5d000 r--p 01c13000 fe:00 16286596                   /usr/bin/earshot
        Rss:                 800 kB
        Anonymous:           800 kB
        7f28939f5000-7f28939f8000 r-xp 00001000 fe:00 333151                     /usr/lib/x86_64-linux-gnu/lib with space.so
        Rss:                  12 kB
        Anonymous:             4 kB
        7ffd1c5f0000-7ffd1c5f2000 r-xp 00000000 00:00 0                          [vdso]
        Rss:                   8 kB
        Anonymous:             0 kB
        7f2894000000-7f2894021000 rw-p 00000000 00:00 0
        Rss:                 132 kB
        Anonymous:           132 kB
        """

    @Test("only executable file mappings with no private page are trimmed")
    func choosesCleanCode() {
        let mappings = ResidentCode.mappings(inSmaps: Self.smaps)
        #expect(mappings.count == 5)
        #expect(mappings[0].start == 0x55e9_8728_1000 && mappings[0].end == 0x55e9_88e9_5000)
        #expect(mappings[0].residentKiB == 17996 && mappings[0].path == "/usr/bin/earshot")
        #expect(mappings[2].path == "/usr/lib/x86_64-linux-gnu/lib with space.so")
        // Relocated read-only data, a code page written to, the vDSO and the heap stay.
        #expect(mappings.map(\.isCleanExecutableFile) == [true, false, false, false, false])
    }

    @Test("trimming this process leaves its code working")
    func trimsThisProcess() throws {
        let trim = try #require(ResidentCode.trim())
        #expect(trim.mappings > 0)
        // The code runs on after its pages were unmapped (they fault back in).
        #expect(ResidentCode.mappings(inSmaps: Self.smaps).count == 5)
    }
}
