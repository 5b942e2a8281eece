import AccessoryDrivers
import ArgumentParser
import FoundationEssentials

/// `earshot driver`: tools for the built-in headset drivers' protocols.
struct DriverCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "driver",
        abstract: "Inspect what the built-in headset drivers read (AirPods AAP, Galaxy Buds).",
        subcommands: [DriverDecodeCommand.self])
}

/// `earshot driver decode`: a packet capture or packet log in, one JSON object per packet out.
struct DriverDecodeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "decode",
        abstract: "Decode headset packets (hex, one per line) as the built-in drivers do.",
        discussion: """
            Each line is one packet as hex (spaces optional), optionally after a packet log's \
            prefix: an address and family, a time (2026-11-22T23:04:05.123Z) and a direction, \
            < from the device or > to it. Blank lines and # comments are skipped. For Galaxy \
            Buds a line is a read of the byte stream: frames may span lines. For Sony a line is \
            one whole frame as it travels (3E ... 3C, stuffed); a handshake reply decides v1 or \
            v2 for the frames after it (v2 until one does).

            Prints one JSON object per packet (per message for Galaxy Buds, per frame for Sony), \
            numbered from 1: kind ear-detection (primary and secondary, or left and right, and \
            the placement under the either rule), battery, audio-source, wear (Sony: the \
            placement, and left and right where the message names them), ack, protocol-info, \
            support-functions, ignored, unknown (with the opcode), malformed (with why: for \
            Sony bad checksum, bad length, bad escape, oversized or wrong table; never a \
            placement), or sent for a > line, which is not decoded.

            Exit 0 once the input is read, whatever it held; 2 when it cannot be read.
            """)

    @Option(help: ArgumentHelp(
        "The protocol: aap, galaxy-buds (2019), galaxy-buds-plus-live-pro, galaxy-buds2-or-later, sony (headphones) or sony-earbuds. Default: each line's family.",
        valueName: "family"),
        completion: .list(AccessoryFamily.logNames))
    var family: String?

    @Argument(help: ArgumentHelp("The packets: a file, a pipe, or - for stdin.", valueName: "file"), completion: .file())
    var input = "-"

    func validate() throws {
        if let family, AccessoryFamily(logName: family) == nil {
            throw ValidationError("--family \"\(family)\" is not one of \(AccessoryFamily.logNames.joined(separator: ", "))")
        }
    }

    func run() throws {
        let output = BufferedOutput()
        let outcome = DriverDecodeActions.run(path: input, family: family.flatMap { AccessoryFamily(logName: $0) }, write: output.write)
        output.flush()
        try outcome.emit()
    }
}
