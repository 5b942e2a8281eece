/// A registration and the timing state of its placement.
public struct AccessoryEntry: Sendable, Hashable {
    public var registration: AccessoryRegistration
    public var timing: PlacementTiming
}

/// A registration that ended: whose it was, why, and when in the registry's count of ends.
public struct EndedRegistration: Sendable, Hashable {
    public var identity: AccessoryIdentity
    public var reporter: String
    public var why: String
    /// The registry's `endCount` right after this end.
    public var sequence: Int
}

/// The live registrations, plus the ones that ended, so a late update can be told `invalidated`
/// (register again) rather than `unknown`.
public struct AccessoryRegistry: Sendable, Hashable {
    public private(set) var entries: [AccessoryIdentity: AccessoryEntry] = [:]
    /// Why each ended registration ended.
    public private(set) var ended: [AccessoryIdentity: String] = [:]
    /// How many registrations have ended so far: read it before an input, then `ended(since:)`
    /// says what that input ended (a config reload announces the ones it invalidated).
    public private(set) var endCount = 0
    private var endedRecords: [AccessoryIdentity: EndedRegistration] = [:]
    /// Scoring skips the by-name lookup entirely while no accessory is named by node.name.
    private(set) var nameEntryCount = 0

    /// At most this many live registrations per reporter, and in all (docs/control-protocol.md,
    /// Limits): a new registration beyond either is refused; registering again is not new.
    public static let maximumPerReporter = 256
    public static let maximumTotal = 1024

    /// Live registrations per reporter, for the cap.
    private var countByReporter: [String: Int] = [:]
    /// Registrations with a placement transition pending: while none is (the usual case),
    /// `nextPending` answers without looking at any registration.
    private var pendingCount = 0

    public init() {}

    public subscript(identity: AccessoryIdentity) -> AccessoryEntry? { entries[identity] }

    /// The registration's current configuration (`current` of the API).
    public func current(_ identity: AccessoryIdentity) -> Result<AccessoryConfiguration, AccessoryError> {
        if let entry = entries[identity] { return .success(entry.registration.configuration) }
        return .failure(missing(identity))
    }

    /// The entry for a sink: its Bluetooth address first, then its node name.
    @inline(__always)
    func entry(address: BluetoothAddress?, name: String) -> AccessoryEntry? {
        if let address, let entry = entries[.address(address)] { return entry }
        if nameEntryCount > 0 { return entries[.nodeName(name)] }
        return nil
    }

    func missing(_ identity: AccessoryIdentity) -> AccessoryError {
        if let why = ended[identity] {
            return AccessoryError(.invalidated, "the registration of \(identity) is no longer valid (\(why)): register it again, then update")
        }
        return AccessoryError(.unknown, "no registration for \(identity) (Earshot may have restarted): register it, then update")
    }

    /// Checks a registration against the declared capabilities and the current owner.
    func validateRegister(_ identity: AccessoryIdentity, reporter: String, _ configuration: AccessoryConfiguration) -> AccessoryError? {
        // A built-in driver's registration gives way to any other reporter (the user's own).
        if let owner = entries[identity]?.registration.reporter, owner != reporter,
            !(ReporterName.isBuiltInDriver(owner) && !ReporterName.isBuiltInDriver(reporter)) {
            return AccessoryError(.invalidRequest, "\(identity) is already registered by \(owner): that reporter must unregister it first")
        }
        if entries[identity] == nil {
            if entries.count >= Self.maximumTotal {
                return AccessoryError(.invalidRequest, "too many registrations: \(entries.count) are live, the limit in all is \(Self.maximumTotal); unregister one first")
            }
            if countByReporter[reporter, default: 0] >= Self.maximumPerReporter {
                return AccessoryError(.invalidRequest, "too many registrations for \(reporter): it has \(Self.maximumPerReporter), the limit per reporter; unregister one first")
            }
        }
        if configuration.placement != nil, !configuration.capabilities.contains(.placement) {
            return AccessoryError(.accessoryNotCapable, "a placement needs the \"placement\" capability: declare it, or leave placement out")
        }
        if configuration.hasSources, !configuration.capabilities.contains(.audioSwitching) {
            return AccessoryError(.accessoryNotCapable, "source identifiers need the \"audio-switching\" capability: declare it, or leave them out")
        }
        return nil
    }

    /// An update or unregister named by a reporter other than the owner is refused, naming the
    /// owner (nil `reporter`: a caller inside the process, not checked).
    func validateOwner(_ identity: AccessoryIdentity, reporter: String?, verb: String) -> AccessoryError? {
        guard let reporter, let owner = entries[identity]?.registration.reporter, owner != reporter else { return nil }
        return AccessoryError(.invalidRequest, "\(identity) is registered by \(owner), not \(reporter): only \(owner) may \(verb) it")
    }

    func validateUpdate(_ identity: AccessoryIdentity, reporter: String?, _ update: AccessoryUpdate) -> AccessoryError? {
        guard let entry = entries[identity] else { return missing(identity) }
        if let error = validateOwner(identity, reporter: reporter, verb: "update") { return error }
        let capabilities = entry.registration.configuration.capabilities
        if !update.placement.isKeep, !capabilities.contains(.placement) {
            return AccessoryError(.accessoryNotCapable, "\(identity) did not declare \"placement\": register again with it to report placement")
        }
        if update.touchesSources, !capabilities.contains(.audioSwitching) {
            return AccessoryError(.accessoryNotCapable, "\(identity) did not declare \"audio-switching\": register again with it to report source identifiers")
        }
        return nil
    }

    mutating func store(_ registration: AccessoryRegistration, timing: PlacementTiming) {
        let replaced = entries.updateValue(AccessoryEntry(registration: registration, timing: timing), forKey: registration.identity)
        if replaced == nil, case .nodeName = registration.identity {
            nameEntryCount += 1
        }
        if let previous = replaced?.registration.reporter { uncount(previous) }
        countByReporter[registration.reporter, default: 0] += 1
        pendingCount += (timing.pending != nil ? 1 : 0) - (replaced?.timing.pending != nil ? 1 : 0)
        ended[registration.identity] = nil
        endedRecords[registration.identity] = nil
    }

    mutating func modify<Result>(_ identity: AccessoryIdentity, _ body: (inout AccessoryEntry) -> Result) -> Result? {
        guard var entry = entries[identity] else { return nil }
        let wasPending = entry.timing.pending != nil
        let result = body(&entry)
        entries[identity] = entry
        pendingCount += (entry.timing.pending != nil ? 1 : 0) - (wasPending ? 1 : 0)
        return result
    }

    mutating func end(_ identity: AccessoryIdentity, because why: String) {
        guard let entry = entries.removeValue(forKey: identity) else { return }
        if case .nodeName = identity { nameEntryCount -= 1 }
        uncount(entry.registration.reporter)
        if entry.timing.pending != nil { pendingCount -= 1 }
        ended[identity] = why
        endCount += 1
        endedRecords[identity] = EndedRegistration(identity: identity, reporter: entry.registration.reporter, why: why, sequence: endCount)
        forgetOldEnds()
    }

    /// Ended registrations remembered (to answer a late update `invalidated`, and for
    /// `ended(since:)`): the newest this many. Registering and unregistering distinct names
    /// for ever must not grow the daemon (issue 21).
    public static let maximumEndedKept = 1024

    /// Keeps the newest `maximumEndedKept` ends, pruning in bulk (amortised constant time).
    private mutating func forgetOldEnds() {
        guard endedRecords.count > 2 * Self.maximumEndedKept else { return }
        let keep = Set(endedRecords.values.sorted { $0.sequence > $1.sequence }.prefix(Self.maximumEndedKept).map(\.identity))
        endedRecords = endedRecords.filter { keep.contains($0.key) }
        ended = ended.filter { keep.contains($0.key) }
    }

    /// How many ended registrations are remembered (bounded).
    public var endedCount: Int { ended.count }

    private mutating func uncount(_ reporter: String) {
        if let count = countByReporter[reporter], count > 1 { countByReporter[reporter] = count - 1 } else { countByReporter[reporter] = nil }
    }

    /// The registrations that ended after the registry's `endCount` was `count`, in the order
    /// they ended (one that ended and was registered again is not among them).
    public func ended(since count: Int) -> [EndedRegistration] {
        guard endCount > count else { return [] }
        return endedRecords.values.filter { $0.sequence > count && entries[$0.identity] == nil }.sorted { $0.sequence < $1.sequence }
    }

    /// The pending transition due first (ties by identity, so runs repeat exactly).
    var nextPending: (identity: AccessoryIdentity, pending: PendingPlacement)? {
        guard pendingCount > 0 else { return nil }
        var best: (identity: AccessoryIdentity, pending: PendingPlacement)?
        for (identity, entry) in entries {
            guard let pending = entry.timing.pending else { continue }
            if let current = best, (current.pending.due, current.identity) <= (pending.due, identity) { continue }
            best = (identity, pending)
        }
        return best
    }
}
