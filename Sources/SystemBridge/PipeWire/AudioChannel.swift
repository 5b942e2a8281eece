import CPipeWire

/// Channel position names (as in `audio.channel` and `audio.position`) to SPA's ids.
enum AudioChannel {
    private static let positions: [String: spa_audio_channel] = [
        "MONO": SPA_AUDIO_CHANNEL_MONO, "FL": SPA_AUDIO_CHANNEL_FL, "FR": SPA_AUDIO_CHANNEL_FR,
        "FC": SPA_AUDIO_CHANNEL_FC, "LFE": SPA_AUDIO_CHANNEL_LFE, "SL": SPA_AUDIO_CHANNEL_SL,
        "SR": SPA_AUDIO_CHANNEL_SR, "FLC": SPA_AUDIO_CHANNEL_FLC, "FRC": SPA_AUDIO_CHANNEL_FRC,
        "RC": SPA_AUDIO_CHANNEL_RC, "RL": SPA_AUDIO_CHANNEL_RL, "RR": SPA_AUDIO_CHANNEL_RR,
    ]

    static func position(_ name: String) -> UInt32 {
        (positions[name.uppercased()] ?? SPA_AUDIO_CHANNEL_UNKNOWN).rawValue
    }
}
