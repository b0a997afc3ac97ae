package answer

// ArgumentError reports invalid tool arguments; it maps to -32602 with
// data.reason = Reason. No request is sent when Call returns one.
type ArgumentError struct{ Reason string }

func (e *ArgumentError) Error() string { return "invalid arguments: " + e.Reason }

// APIError reports a failed answer; it maps to -32001 "answer failed" with
// data.message = Message and, in debug mode, status/type/code/name.
type APIError struct {
	Message string // the API's own message (or "Missing API key: set OPENAI_API_KEY")
	Status  int    // HTTP status, 0 when none
	Type    string // API error type
	Code    string // API error code
	Name    string // error class: "APIError", "TimeoutError", "ConnectionError", "ConfigError"
	Err     error  // the underlying error, if any
}

func (e *APIError) Error() string { return "answer failed: " + e.Message }
func (e *APIError) Unwrap() error { return e.Err }

// Error class names used in APIError.Name.
const (
	NameAPIError        = "APIError"        // the API answered with an error status, or an unusable body
	NameTimeoutError    = "TimeoutError"    // an attempt exceeded request.timeout_ms
	NameConnectionError = "ConnectionError" // no HTTP response (refused, reset, DNS, TLS)
	NameConfigError     = "ConfigError"     // the call could not be made as configured (no key, no model)
)
