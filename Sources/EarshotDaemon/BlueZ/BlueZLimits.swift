/// How much the BlueZ mirror keeps of what the bus says. Whoever owns org.bluez decides what
/// arrives; a broken or hostile owner must not make the daemon's memory grow without end, so
/// objects beyond these counts are left out and oversized values are cut or dropped. Real
/// BlueZ stays far below all of them.
enum BlueZLimits {
    /// Device1 objects tracked at once (a busy scan lists a few hundred at most).
    static let devices = 512
    /// Adapter1 objects tracked at once.
    static let adapters = 64
    /// An object path's UTF-8 bytes (BlueZ's are about 40); longer objects are left out.
    static let pathBytes = 256
    /// A Name or Alias's UTF-8 bytes: Bluetooth names have at most 248, longer ones are cut.
    static let nameBytes = 248
    /// A Modalias's UTF-8 bytes (`bluetooth:v004Cp200Ed0100` is 26); longer ones are dropped.
    static let modaliasBytes = 64
    /// UUIDs kept per device; the rest are dropped.
    static let uuids = 64
    /// One UUID's UTF-8 bytes (the 128-bit form has 36); longer ones are dropped.
    static let uuidBytes = 36
}
