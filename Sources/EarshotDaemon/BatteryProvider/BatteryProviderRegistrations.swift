/// Where Earshot stands with each adapter's `BatteryProviderManager1`, and which of BlueZ's
/// answers still count. Pure: `BatteryProviderService` tells it what it asked and what BlueZ
/// said; `states` feeds `BatteryProviderPlan`.
///
/// An adapter with no state is registered at the next step, so every change that makes BlueZ
/// forget Earshot's registration (a new bluetoothd, the adapter or its manager removed) drops
/// the state, and a manager that appears clears what an earlier attempt concluded.
struct BatteryProviderRegistrations: Equatable {
    typealias Registration = BatteryProviderPlan.Registration

    private(set) var states: [String: Registration] = [:]
    /// The attempt each pending adapter waits on: an answer to an older one (sent before BlueZ
    /// restarted or the adapter went and came back) says nothing about the current state.
    private var attemptsInFlight: [String: Int] = [:]
    private var lastAttempt = 0

    /// Adapters BlueZ holds Earshot's provider on, for the Unregister at a clean exit.
    var registered: [String] {
        states.filter { $0.value == .registered }.keys.sorted()
    }

    /// RegisterBatteryProvider goes out; the attempt to hand back with its answer.
    mutating func begin(_ adapter: String) -> Int {
        lastAttempt += 1
        states[adapter] = .pending
        attemptsInFlight[adapter] = lastAttempt
        return lastAttempt
    }

    /// The adapter has no manager, as far as BlueZ said.
    mutating func unavailable(_ adapter: String) {
        states[adapter] = .unavailable
        attemptsInFlight[adapter] = nil
    }

    /// BlueZ answered `attempt` on `adapter`: false (and nothing kept) when the answer is stale.
    mutating func answered(_ adapter: String, attempt: Int, _ registration: Registration) -> Bool {
        guard attemptsInFlight[adapter] == attempt, states[adapter] == .pending else { return false }
        attemptsInFlight[adapter] = nil
        states[adapter] = registration
        return true
    }

    /// A new bluetoothd (or none) knows no provider.
    mutating func forgetAll() {
        states = [:]
        attemptsInFlight = [:]
    }

    /// The adapter or its manager went: BlueZ dropped the registration with it.
    mutating func managerGone(_ adapter: String) {
        states[adapter] = nil
        attemptsInFlight[adapter] = nil
    }

    /// The adapter gained a manager: what an earlier attempt found no longer holds (a call in
    /// flight answers for itself; BlueZ's AlreadyExists counts as registered).
    mutating func managerAppeared(_ adapter: String) {
        guard states[adapter] != .pending else { return }
        states[adapter] = nil
    }
}
