// The IPC types the window reads, under plain names. tauri-specta emits a `_Serialize` shape
// for what the backend sends (nullable fields present) and a `_Deserialize` one for what it
// accepts; the window reads the former and sends the latter.
import type {
  AttemptView_Serialize,
  ClientSetupReport_Serialize,
  ClientStatus_Serialize,
  ConnectionDetail_Serialize,
  CredentialHealthView_Serialize,
  EvidenceSummary_Serialize,
  HealthView_Serialize,
  ImportReport_Serialize,
  ImportedConnection_Serialize,
  LimitStatusView_Serialize,
  IpcError_Serialize,
  ModelProof_Serialize,
  ProfileQuota_Serialize,
  ProfileView_Serialize,
  ProfileReadiness_Serialize,
  QuotaView_Serialize,
  QuotaWindowView_Serialize,
  RelayStatus_Serialize,
  RoutingStatus_Serialize,
  UsageChart_Serialize,
  UsageRow_Serialize,
  UsageSeries_Serialize,
  VerifyEvent_Serialize,
  VerifyProgress_Serialize,
  VerifyReport_Serialize,
  VerifyResult_Serialize,
} from '../bindings';

export type {
  AffinityView,
  AppInfo,
  ClientPreview,
  ClientRestoreReport,
  ConnectionView,
  BrowserSignInView,
  DeviceCodeView,
  ExportResult,
  ImportedProfile,
  ExcludedView,
  GateView,
  HeaderView,
  ErrorCode,
  ModelGateView,
  OrderEntry,
  Removal,
} from '../bindings';
// The engine's own input types (engine/src/config/inputs.rs), under the names the forms use.
export type ConnectionInput = import('../bindings').NewConnection;
export type ConnectionEditInput = import('../bindings').ConnectionEdit_Deserialize;
export type ProfileInput = import('../bindings').NewProfile_Deserialize;
/** What a new profile's credential is (`kind`, `client`, a token's `expires_at`); absent: an API key. */
export type CredentialInput = import('../bindings').NewCredential_Deserialize;
export type ProfileEditInput = import('../bindings').ProfileEdit_Deserialize;
export type OrderInput = import('../bindings').OrderEntry;
export type {
  AffinityMode,
  CapKind,
  CircuitState,
  CredentialHealthState,
  CredentialPresence,
  EvidenceOutcome,
  EvidenceState,
  OfficialClient,
  PortSource,
  ProfileKind,
  RelayState,
  RoutingMode,
  RoutingState,
  VerifyOutcome,
} from '../bindings';

export type AttemptView = AttemptView_Serialize;
export type LimitStatusView = LimitStatusView_Serialize;
export type ClientSetupReport = ClientSetupReport_Serialize;
export type ClientStatus = ClientStatus_Serialize;
export type ConnectionDetail = ConnectionDetail_Serialize;
export type CredentialHealthView = CredentialHealthView_Serialize;
export type EvidenceSummary = EvidenceSummary_Serialize;
export type HealthView = HealthView_Serialize;
export type ImportReport = ImportReport_Serialize;
export type ImportedConnection = ImportedConnection_Serialize;
export type IpcError = IpcError_Serialize;
export type ModelProof = ModelProof_Serialize;
export type ProfileQuota = ProfileQuota_Serialize;
export type ProfileView = ProfileView_Serialize;
export type ProfileReadiness = ProfileReadiness_Serialize;
export type QuotaView = QuotaView_Serialize;
export type QuotaWindowView = QuotaWindowView_Serialize;
export type RelayStatus = RelayStatus_Serialize;
export type RoutingStatus = RoutingStatus_Serialize;
export type UsageChart = UsageChart_Serialize;
export type UsageRow = UsageRow_Serialize;
export type UsageSeries = UsageSeries_Serialize;
export type VerifyEvent = VerifyEvent_Serialize;
export type VerifyProgress = VerifyProgress_Serialize;
export type VerifyReport = VerifyReport_Serialize;
export type VerifyResult = VerifyResult_Serialize;

/** What a command returns through tauri-specta. */
export type IpcResult<T> = { status: 'ok'; data: T } | { status: 'error'; error: IpcError };
