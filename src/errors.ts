// The one catalogue of client-visible errors: code, HTTP status and a message that says what to do next.
// The README's error table is checked against this list by test/error-catalogue.test.ts.

export interface ApiError {
  readonly code: string;
  readonly status: number;
  readonly message: string;
  /** Extra response headers, e.g. Retry-After. */
  readonly headers?: Readonly<Record<string, string>>;
}

const FORMS_HELP =
  'Send JSON in one of three forms: ' +
  'flat {"data":{"temperature":21.5},"recorded_at":"2026-01-01 12:00:00"}, ' +
  'batch {"readings":[{"metric_name":"temperature","metric_value":21.5,"unit":"C"}]}, ' +
  'or single {"metric_name":"temperature","metric_value":21.5}.';

const define = (code: string, status: number, message: string, headers?: Record<string, string>): ApiError =>
  Object.freeze({ code, status, message, headers });

export const Errors = {
  invalidDeviceToken: define('INVALID_DEVICE_TOKEN', 401, 'Invalid device token.', { 'WWW-Authenticate': 'Bearer' }),
  invalidJson: (detail: string) => define('INVALID_JSON', 400, `Body is not valid JSON (${detail}). ${FORMS_HELP}`),
  notAnObject: define('BODY_NOT_OBJECT', 400, `Body must be a JSON object. ${FORMS_HELP}`),
  noNumericMetrics: define('NO_NUMERIC_METRICS', 400, `No numeric metrics found in the payload. ${FORMS_HELP}`),
  badShape: (detail: string) => define('BAD_PAYLOAD', 400, `Payload ${detail}. ${FORMS_HELP}`),
  badRecordedAt: (detail: string) => define('BAD_RECORDED_AT', 400,
    `recorded_at ${detail}. Use "YYYY-MM-DD HH:MM:SS" (UTC), ISO 8601 with Z or an offset, or epoch seconds or milliseconds, between 2000-01-01 and now + 1 day.`),
  badMetricName: (name: string) => define('BAD_METRIC_NAME', 400,
    `Metric name ${JSON.stringify(name.slice(0, 80))} is invalid: use 1 to 64 characters from A-Z a-z 0-9 _ . : / -.`),
  badMetricValue: (name: string) => define('BAD_METRIC_VALUE', 400,
    `Metric ${JSON.stringify(name)} has a value outside the range of a double; send a finite number.`),
  badUnit: (name: string) => define('BAD_UNIT', 400,
    `Unit of metric ${JSON.stringify(name)} must be a string of at most 32 printable characters.`),
  badGps: (detail: string) => define('BAD_GPS', 400,
    `GPS ${detail}. Send "gps":{"lat":-90..90,"lng":-180..180} with optional numeric altitude_m, speed_kmh, heading_deg, accuracy_m.`),
  bodyTooLarge: (maxBytes: number) => define('BODY_TOO_LARGE', 413,
    `Body is larger than ${maxBytes} bytes; split the readings over several requests.`),
  tooManyReadings: (max: number) => define('TOO_MANY_READINGS', 413,
    `More than ${max} readings in one request; split them over several requests.`),
  deviceRateLimited: (retryAfterS: number) => define('DEVICE_RATE_LIMITED', 429,
    'This device sends more requests per second than allowed; wait and retry after the Retry-After seconds.',
    { 'Retry-After': String(retryAfterS) }),
  queueFull: define('INGEST_QUEUE_FULL', 503,
    'The ingest queue is full; nothing of this request was stored. Retry after the Retry-After seconds, with backoff.',
    { 'Retry-After': '1' }),
  databaseUnavailable: define('DATABASE_UNAVAILABLE', 503,
    'The database did not commit this batch; nothing of this request was stored. Retry after the Retry-After seconds.',
    { 'Retry-After': '2' }),
  shuttingDown: define('SHUTTING_DOWN', 503,
    'The service is shutting down; nothing of this request was stored. Retry on another instance or shortly.',
    { 'Retry-After': '1' }),
  // Mobile API (answered as {"status": "error", "error": message}).
  credentialsRequired: define('CREDENTIALS_REQUIRED', 400, 'email and password are required.'),
  invalidCredentials: define('INVALID_CREDENTIALS', 401, 'Invalid email or password.'),
  loginThrottled: (retryAfterS: number) => define('LOGIN_THROTTLED', 429, 'Too many failed logins; try again later.',
    { 'Retry-After': String(retryAfterS) }),
  invalidAccessToken: define('INVALID_ACCESS_TOKEN', 401, 'Invalid or expired access token.', { 'WWW-Authenticate': 'Bearer' }),
  resourceNotFound: define('RESOURCE_NOT_FOUND', 404, 'Not found.'),
  alertNotOpen: (status: string) => define('ALERT_NOT_OPEN', 409, `This alert is ${status}; only an open alert can be acknowledged.`),
  alertResolved: define('ALERT_ALREADY_RESOLVED', 409, 'This alert is already resolved; a new firing reading opens a new alert.'),
  badQuery: (message: string) => define('BAD_QUERY', 400, message),
  // Alert rules in the mobile API (src/mobile/rule-routes.ts); the messages come from src/alerts/rules.ts.
  badRule: (message: string) => define('BAD_RULE', 400, message),
  ruleForbidden: (message: string) => define('RULE_FORBIDDEN', 403, message),
  ruleDeviceNotFound: (message: string) => define('DEVICE_NOT_FOUND', 404, message),
  ruleLimitReached: (message: string) => define('RULE_LIMIT_REACHED', 409, message),
  // Webhooks in the mobile API (src/mobile/webhook-routes.ts); the messages come from src/alerts/webhooks.ts.
  badWebhook: (message: string) => define('BAD_WEBHOOK', 400, message),
  badText: define('BAD_TEXT', 400, 'A parameter holds characters that cannot be stored (a NUL byte or invalid UTF-8).'),
  requestTooLarge: (maxBytes: number) => define('REQUEST_TOO_LARGE', 413, `Request body is larger than ${maxBytes} bytes.`),
  serviceUnavailable: define('SERVICE_UNAVAILABLE', 503, 'Service temporarily unavailable; retry shortly.', { 'Retry-After': '2' }),
  notFound: define('NOT_FOUND', 404, 'No such route.'),
  methodNotAllowed: define('METHOD_NOT_ALLOWED', 405, 'Method not allowed on this route.', { Allow: 'POST' }),
} as const;

/** Every code with its status, for the documentation check. */
export function allErrors(): { code: string; status: number }[] {
  return Object.values(Errors)
    .map((entry) => (typeof entry === 'function' ? (entry as (...a: never[]) => ApiError)(...(['0', '0'] as never[])) : entry))
    .map(({ code, status }) => ({ code, status }))
    .sort((a, b) => a.code.localeCompare(b.code));
}
