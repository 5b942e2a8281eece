import Foundation

/// A local web page that plays a tone as soon as it loads: `<audio autoplay loop>` of a WAV
/// file made here (no package, no network).
public enum TonePage {
    /// The tone's length. Browsers publish MPRIS only for media they count as content, not as
    /// a short effect: Chromium published nothing for a 3 s tone and did for 10 s (its source
    /// counts media under 5 s as transient); Firefox did for both.
    public static let seconds = 10
    public static let frequency = 440.0
    public static let sampleRate = 48_000

    /// Writes `tone.wav` and `index.html` into `directory` (made if missing); returns the
    /// page's file URL. `title` is the page's title (Firefox names its stream after it).
    @discardableResult
    public static func write(into directory: URL, title: String = "earshot tone") throws -> URL {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        try wav().write(to: directory.appendingPathComponent("tone.wav"))
        let page = directory.appendingPathComponent("index.html")
        try """
        <!doctype html>
        <html><head><meta charset="utf-8"><title>\(title)</title></head>
        <body><audio id="tone" autoplay loop src="tone.wav"></audio></body></html>

        """.write(to: page, atomically: true, encoding: .utf8)
        return page
    }

    /// A mono 16-bit PCM WAV of `seconds` of a `frequency` sine at a quarter of full scale;
    /// a whole number of periods, so that the loop joins without a click.
    public static func wav() -> Data {
        let frames = seconds * sampleRate
        var data = Data(capacity: 44 + frames * 2)
        func le32(_ value: UInt32) { withUnsafeBytes(of: value.littleEndian) { data.append(contentsOf: $0) } }
        func le16(_ value: UInt16) { withUnsafeBytes(of: value.littleEndian) { data.append(contentsOf: $0) } }
        data.append(contentsOf: Array("RIFF".utf8))
        le32(UInt32(36 + frames * 2))
        data.append(contentsOf: Array("WAVEfmt ".utf8))
        le32(16); le16(1); le16(1); le32(UInt32(sampleRate)); le32(UInt32(sampleRate * 2)); le16(2); le16(16)
        data.append(contentsOf: Array("data".utf8))
        le32(UInt32(frames * 2))
        var samples = [Int16](repeating: 0, count: frames)
        for frame in 0..<frames {
            samples[frame] = Int16((0.25 * 32767 * sin(2 * Double.pi * frequency * Double(frame) / Double(sampleRate))).rounded())
        }
        samples.map(\.littleEndian).withUnsafeBytes { data.append(contentsOf: $0) }
        return data
    }
}
