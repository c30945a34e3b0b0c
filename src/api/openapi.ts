import type { INestApplication } from '@nestjs/common';
import { DocumentBuilder, OpenAPIObject, SwaggerModule } from '@nestjs/swagger';
import { Type } from '@sinclair/typebox';
import { stringify } from 'yaml';
import { JobSpecSchema } from '../training/spec/job-spec';
import { ApiKeyListSchema, CreateApiKeySchema, IssuedApiKeySchema } from '../contracts/api-keys.dto';
import { AuditEventListSchema } from '../contracts/audit.dto';
import { AlgorithmSchema, EnvironmentSchema } from '../contracts/catalog.dto';
import { RegisterEnvironmentSchema } from '../contracts/environments.dto';
import { CreateEvaluationSchema, EvaluationListSchema, EvaluationSchema, ForkJobSchema, RollbackJobSchema } from '../contracts/checkpoint-actions.dto';
import { CheckpointListSchema, JobEventListSchema, JobListSchema, JobSchema, MetricSeriesSchema, TrajectoryListSchema, WarmupViewSchema } from '../contracts/jobs.dto';
import { CreateExperimentSchema, ExperimentActionSchema, ExperimentCurvesSchema, ExperimentListSchema, ExperimentSchema, ExperimentSummarySchema } from '../contracts/experiments.dto';
import { QueueViewSchema, UsageViewSchema } from '../contracts/lab.dto';
import { HealthSchema, ReadinessSchema } from '../contracts/operations.dto';
import { CreateTeamSchema, TeamListSchema, TeamSchema, UpdateTeamSchema } from '../contracts/teams.dto';
import { CreatedUserSchema, CreateUserSchema, PrincipalSchema, UpdateUserSchema, UserListSchema, UserSchema } from '../contracts/users.dto';
import { BacktestBodySchema, BacktestResultSchema, WarningListSchema } from '../contracts/warnings.dto';
import { CreatedWebhookSchema, CreateWebhookSchema, WebhookDeliveryListSchema, WebhookListSchema, WebhookTestResultSchema } from '../contracts/webhooks.dto';
import { toJsonSchema } from '../services/json-schema';
import { applyHttpPolicy } from './openapi-policy';

const ProblemSchema = Type.Object({
  type: Type.String({ format: 'uri' }),
  title: Type.String(),
  status: Type.Integer(),
  detail: Type.Optional(Type.String()),
  instance: Type.Optional(Type.String()),
  errors: Type.Optional(Type.Array(Type.Object({ field: Type.String(), message: Type.String() }), { description: 'present for validation problems' })),
  errorId: Type.Optional(Type.String({ description: 'present for 500s; quote it when reporting' })),
});

/** Named schemas of the contract; TypeBox is the single source for validation and for docs. */
const COMPONENTS = {
  Problem: ProblemSchema,
  JobSpec: JobSpecSchema,
  Job: JobSchema,
  JobList: JobListSchema,
  MetricSeries: MetricSeriesSchema,
  JobEventList: JobEventListSchema,
  TrajectoryList: TrajectoryListSchema,
  CheckpointList: CheckpointListSchema,
  Warmup: WarmupViewSchema,
  CreateExperiment: CreateExperimentSchema,
  Experiment: ExperimentSchema,
  ExperimentSummary: ExperimentSummarySchema,
  ExperimentList: ExperimentListSchema,
  ExperimentCurves: ExperimentCurvesSchema,
  ExperimentAction: ExperimentActionSchema,
  CheckpointBytes: Type.String({ format: 'binary' }),
  CreateEvaluation: CreateEvaluationSchema,
  Evaluation: EvaluationSchema,
  EvaluationList: EvaluationListSchema,
  ForkJob: ForkJobSchema,
  RollbackJob: RollbackJobSchema,
  EnvironmentList: Type.Object({ data: Type.Array(EnvironmentSchema) }),
  Environment: EnvironmentSchema,
  RegisterEnvironment: RegisterEnvironmentSchema,
  AlgorithmList: Type.Object({ data: Type.Array(AlgorithmSchema) }),
  QueueView: QueueViewSchema,
  UsageView: UsageViewSchema,
  WarningList: WarningListSchema,
  BacktestBody: BacktestBodySchema,
  BacktestResult: BacktestResultSchema,
  CreateWebhook: CreateWebhookSchema,
  CreatedWebhook: CreatedWebhookSchema,
  WebhookList: WebhookListSchema,
  WebhookTestResult: WebhookTestResultSchema,
  WebhookDeliveryList: WebhookDeliveryListSchema,
  CreateUser: CreateUserSchema,
  CreatedUser: CreatedUserSchema,
  User: UserSchema,
  UserList: UserListSchema,
  UpdateUser: UpdateUserSchema,
  CreateApiKey: CreateApiKeySchema,
  IssuedApiKey: IssuedApiKeySchema,
  ApiKeyList: ApiKeyListSchema,
  CreateTeam: CreateTeamSchema,
  UpdateTeam: UpdateTeamSchema,
  Team: TeamSchema,
  TeamList: TeamListSchema,
  AuditEventList: AuditEventListSchema,
  Principal: PrincipalSchema,
  Health: HealthSchema,
  Readiness: ReadinessSchema,
  EventStream: Type.String({
    description:
      'Server-sent events (text/event-stream): first `retry: 2000`, then one block per job event, `id: <event id>`, `event: <type>` and `data: <JobEvent as JSON>`, ' +
      'separated by blank lines, with `: keep-alive` comments while idle. Reconnect with Last-Event-ID to continue after the last event received.',
  }),
  PrometheusText: Type.String(),
  OpenApiDocument: Type.String(),
};

export function buildOpenApiDocument(app: INestApplication, version: string): OpenAPIObject {
  const config = new DocumentBuilder()
    .setTitle('StarLab')
    .setVersion(version)
    .setDescription(
      'Trains multi-turn RL agents (StarPO, StarPO-S) on Bandit, Sokoban and FrozenLake, queued fairly across a lab’s users, ' +
        'with step metrics, trajectories, checkpoints and collapse warnings. Errors are RFC 9457 application/problem+json.',
    )
    .setLicense('MIT', 'https://opensource.org/license/mit')
    .addServer('/', 'the StarLab service that serves this document')
    .addBearerAuth({ type: 'http', scheme: 'bearer', bearerFormat: 'StarLab API key (opaque)', description: 'an API key: `Authorization: Bearer <key>`' })
    .build();
  const document = SwaggerModule.createDocument(app, config, { operationIdFactory: (_controller, method) => method });
  const schemas = Object.fromEntries(Object.entries(COMPONENTS).map(([name, schema]) => [name, toJsonSchema(schema)]));
  document.components = { ...document.components, schemas: { ...(document.components?.schemas ?? {}), ...schemas } };
  // TypeBox writes JSON Schema 2020-12 (const, type null, patternProperties): OpenAPI 3.1's dialect.
  document.openapi = '3.1.0';
  applyHttpPolicy(document);
  return document;
}

/** Deterministic YAML (sorted keys) so the committed file and the generated one compare exactly. */
export function toYaml(document: OpenAPIObject): string {
  return stringify(JSON.parse(JSON.stringify(document)), { sortMapEntries: true, lineWidth: 0 });
}
