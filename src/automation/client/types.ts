// Wire types the client returns (camelCase, as the server sends them). Runs and automations carry
// more fields than listed; the index signatures keep them reachable without `any`.

export interface FileObject {
  id: string;
  filename: string;
  contentType: string | null;
  size: number | null;
  purpose?: string | null;
  createdAt: string;
}

export type UploadNegotiation =
  | {
      transport: "presigned-put";
      uploadId: string;
      fileId: string;
      url: string;
      method?: "PUT";
      headers?: Record<string, string>;
      expiresAt: string;
      maxFileSizeBytes: number;
    }
  | { transport: "multipart"; url: string; maxFileSizeBytes: number };

export interface UploadSession {
  uploadId: string;
  fileId: string;
  status: "pending" | "uploaded" | "completed" | "aborted";
  filename: string;
  contentType: string;
  size: number;
  purpose: string | null;
  createdAt: string;
  expiresAt: string;
  completedAt: string | null;
}

export interface AuthCheck {
  ok: true;
  tenantId: string;
  tenantSlug: string;
  tenantName: string;
  userId: string | null;
  keyId: string;
  email: string | null;
  name: string | null;
  scope: string[];
  wildcardGranted: boolean;
}

export interface Triggers {
  api: boolean;
  email: boolean;
  manual: boolean;
  cron: unknown;
}

export interface Automation {
  id: string;
  type: "workflow" | "agent";
  slug: string;
  name: string | null;
  description: string | null;
  status: string;
  version: string | null;
  triggers: Triggers;
  implementationAvailable?: boolean;
  createdAt: string;
  updatedAt: string;
  inputSchema?: Record<string, unknown>;
  outputSchema?: Record<string, unknown>;
  [key: string]: unknown;
}

export interface Page<T> {
  data: T[];
  total: number;
  limit: number;
  offset: number;
}

export interface AutomationVersion {
  id: string;
  automationId: string;
  version: string | null;
  sourceRef: string | null;
  isCurrent: boolean;
  createdAt: string;
  [key: string]: unknown;
}

export type RunStatus = "created" | "pending" | "running" | "waiting" | "finalizing" | "completed" | "failed" | "cancelled" | "rejected";

export interface Run {
  id: string;
  type: string;
  finished: boolean;
  execution?: { status: RunStatus; [key: string]: unknown };
  output?: unknown;
  error?: unknown;
  files?: { name: string; role: string; path: string; stepName: string | null; contentType: string | null; size: number | null }[];
  [key: string]: unknown;
}

export interface RunList {
  runs: Run[];
  nextCursor: string | null;
}

export interface RunEvent {
  type: string;
  timestamp: string;
  status?: string | null;
  message?: string | null;
  metadata?: Record<string, unknown> | null;
}

export interface RunStep {
  name: string;
  type: string;
  status: string;
  startedAt: string | null;
  completedAt: string | null;
  durationMs: number | null;
  attempt: number;
  output?: unknown;
  error?: unknown;
}

export interface Artifact {
  path: string;
  [key: string]: unknown;
}

export interface CancelResult {
  id: string;
  type: string;
  finished: boolean;
  execution: { status: RunStatus };
  cancellation: { state: "cancelled" | "requested" | "already_terminal"; wasStatus: RunStatus };
}
