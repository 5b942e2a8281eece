import WireFields
import ControlProtocol
import ArgumentParser
import AudioGraph
import FoundationEssentials
import RoutingPolicy

/// `earshot accessory register|update|show|unregister`: the accessory API from the shell, as a
/// reporter would use it over the control socket.
struct AccessoryCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "accessory", abstract: "Register, update, show or unregister accessories with the running daemon.",
        discussion: "Exit codes: 0 ok, 1 refused by the daemon (its error code and message are printed), 2 usage, 3 daemon not reachable.",
        subcommands: [AccessoryRegisterCommand.self, AccessoryUpdateCommand.self, AccessoryShowCommand.self, AccessoryUnregisterCommand.self])
}

struct AccessoryRegisterCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "register",
        abstract: "Register an accessory; the registration outlives this command.")

    @Argument(help: ArgumentHelp("A Bluetooth address (AA:BB:CC:DD:EE:FF) or a node.name.", valueName: "address|node"))
    var accessory: String

    @Option(
        help: ArgumentHelp("What the accessory can do: audio-switching and/or placement, comma-separated (none for neither).", valueName: "list"),
        completion: .list(["audio-switching,placement", "audio-switching", "placement", "none"]))
    var capabilities: String

    @Option(help: "in-ear, on-head, over-the-ear or off-head (needs the placement capability).", completion: .list(Placement.allCases.map(\.rawValue)))
    var placement: String?

    @Option(name: .customLong("primary-source"), help: ArgumentHelp("Bluetooth address of the host the accessory plays for first.", valueName: "address"))
    var primarySource: String?

    @Option(name: .customLong("secondary-source"), help: ArgumentHelp("Bluetooth address of its second host.", valueName: "address"))
    var secondarySource: String?

    @Option(help: "The reporter's reverse-DNS name.")
    var reporter = "org.earshot.cli"

    @OptionGroup var socket: ControlSocketOption

    func validate() throws {
        try ControlArguments.accessory(accessory)
        _ = try ControlArguments.capabilities(capabilities)
        try ControlArguments.placement(placement)
        try ControlArguments.source(primarySource, option: "--primary-source", allowNone: false)
        try ControlArguments.source(secondarySource, option: "--secondary-source", allowNone: false)
    }

    func run() throws {
        let request = ControlActions.registerRequest(
            accessory: accessory, capabilities: try ControlArguments.capabilities(capabilities), placement: placement,
            primarySource: primarySource, secondarySource: secondarySource, reporter: reporter)
        try ControlActions.exchange(
            socket: socket.path, .register, request, reply: ControlWire.AccessoryResult.self,
            render: { "registered " + ControlText.accessory($0.accessory) }, warnings: { $0.warnings ?? [] }
        ).emit()
    }
}

struct AccessoryUpdateCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "update", abstract: "Report a registered accessory's placement or sources.")

    @Argument(help: ArgumentHelp("A Bluetooth address (AA:BB:CC:DD:EE:FF) or a node.name.", valueName: "address|node"))
    var accessory: String

    @Option(help: "in-ear, on-head, over-the-ear or off-head.", completion: .list(Placement.allCases.map(\.rawValue)))
    var placement: String?

    @Option(name: .customLong("primary-source"), help: ArgumentHelp("Bluetooth address of its first host, or none to clear it.", valueName: "address|none"))
    var primarySource: String?

    @Option(name: .customLong("secondary-source"), help: ArgumentHelp("Bluetooth address of its second host, or none to clear it.", valueName: "address|none"))
    var secondarySource: String?

    @Option(help: "The reporter's reverse-DNS name: the one that registered the accessory.")
    var reporter = "org.earshot.cli"

    @OptionGroup var socket: ControlSocketOption

    func validate() throws {
        try ControlArguments.accessory(accessory)
        try ControlArguments.placement(placement)
        try ControlArguments.source(primarySource, option: "--primary-source", allowNone: true)
        try ControlArguments.source(secondarySource, option: "--secondary-source", allowNone: true)
        if placement == nil, primarySource == nil, secondarySource == nil {
            throw ValidationError("nothing to update: give --placement, --primary-source or --secondary-source")
        }
    }

    func run() throws {
        let request = ControlActions.updateRequest(accessory: accessory, reporter: reporter, placement: placement, primarySource: primarySource, secondarySource: secondarySource)
        try ControlActions.exchange(socket: socket.path, .update, request, reply: ControlWire.AccessoryResult.self) { reply in
            "updated " + ControlText.accessory(reply.accessory)
        }.emit()
    }
}

struct AccessoryShowCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "show", abstract: "Show one accessory's configuration, or every registration.")

    @Argument(help: ArgumentHelp("A Bluetooth address or node.name; without it, every registration.", valueName: "address|node"))
    var accessory: String?

    @Flag(help: "Print the JSON the daemon sent (one line).")
    var json = false

    @OptionGroup var socket: ControlSocketOption

    func validate() throws {
        if let accessory { try ControlArguments.accessory(accessory) }
    }

    func run() throws {
        if let accessory {
            let request = ControlWire.AccessoryField(accessory: accessory)
            try ControlActions.exchange(socket: socket.path, .current, request, reply: ControlWire.AccessoryResult.self) { reply in
                json ? ControlWire.text(reply.accessory) : ControlText.accessory(reply)
            }.emit()
        } else {
            try ControlActions.listAll(socket: socket.path) { accessories in
                json ? ControlWire.text(accessories) : ControlText.accessories(accessories)
            }.emit()
        }
    }
}

struct AccessoryUnregisterCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "unregister", abstract: "End an accessory's registration.")

    @Argument(help: ArgumentHelp("A Bluetooth address (AA:BB:CC:DD:EE:FF) or a node.name.", valueName: "address|node"))
    var accessory: String

    @Option(help: "The reporter's reverse-DNS name: the one that registered the accessory.")
    var reporter = "org.earshot.cli"

    @OptionGroup var socket: ControlSocketOption

    func validate() throws { try ControlArguments.accessory(accessory) }

    func run() throws {
        let request = ControlWire.AccessoryField(accessory: accessory, reporter: reporter)
        try ControlActions.exchange(socket: socket.path, .unregister, request, reply: ControlWire.AccessoryResult.self) { _ in
            "unregistered \(accessory)"
        }.emit()
    }
}
