import Varlink

/// What the daemon does with a call.
enum CallOutcome {
    /// Send this reply (unless the call was oneway).
    case reply(JSONObject)
    /// Send this error (unless the call was oneway).
    case failure(VarlinkError)
    /// Stream the states of this stopwatch: the current one now, then every change.
    case watch(name: String)
}
