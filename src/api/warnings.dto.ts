import { Static, Type } from '@sinclair/typebox';
import { CollapseRuleSchema } from '../training/signals/collapse';

export const WarningsQuerySchema = Type.Object(
  { minSeverity: Type.Optional(Type.Union([Type.Literal('info'), Type.Literal('warning'), Type.Literal('critical')])) },
  { additionalProperties: false },
);
export type WarningsQuery = Static<typeof WarningsQuerySchema>;

export const CollapseWarningSchema = Type.Object({
  step: Type.Integer(),
  detector: Type.String(),
  signal: Type.String({ description: 'the canonical metric the detector watched' }),
  value: Type.Number(),
  threshold: Type.Number(),
  severity: Type.Union([Type.Literal('info'), Type.Literal('warning'), Type.Literal('critical')]),
  message: Type.String(),
});
export const WarningListSchema = Type.Object({ data: Type.Array(CollapseWarningSchema) });

export const BacktestBodySchema = Type.Object(
  { rules: Type.Array(CollapseRuleSchema, { maxItems: 32, description: 'overrides of the default detectors, as in collapse.rules' }) },
  { additionalProperties: false },
);
export type BacktestBody = Static<typeof BacktestBodySchema>;

export const BacktestResultSchema = Type.Object({
  data: Type.Array(CollapseWarningSchema),
  steps: Type.Integer({ description: 'steps replayed' }),
  collapseStep: Type.Union([Type.Integer(), Type.Null()], { description: 'first step where smoothed success fell below half of its peak' }),
});

export const CreateWebhookSchema = Type.Object(
  {
    url: Type.String({ pattern: '^https?://\\S+$', maxLength: 2000, description: 'http(s) endpoint that receives signed POSTs' }),
    events: Type.Optional(
      Type.Array(
        Type.Union(['collapse.warning', 'job.succeeded', 'job.failed', 'job.cancelled', 'job.paused', '*'].map((e) => Type.Literal(e))),
        { minItems: 1, maxItems: 10, default: ['collapse.warning'] },
      ),
    ),
  },
  { additionalProperties: false },
);
export type CreateWebhookBody = Static<typeof CreateWebhookSchema>;

const WebhookSchema = Type.Object({ id: Type.String(), url: Type.String(), events: Type.Array(Type.String()), active: Type.Boolean(), createdAt: Type.String() });
export const WebhookListSchema = Type.Object({ data: Type.Array(WebhookSchema) });
export const CreatedWebhookSchema = Type.Composite([WebhookSchema, Type.Object({ secret: Type.String({ description: 'whsec_… — verify the webhook-signature header with it; shown once' }) })]);
export const WebhookTestResultSchema = Type.Object({
  deliveryId: Type.String(),
  status: Type.String(),
  responseStatus: Type.Union([Type.Integer(), Type.Null()]),
  error: Type.Union([Type.String(), Type.Null()]),
});
export const WebhookDeliveryListSchema = Type.Object({
  data: Type.Array(Type.Object({ id: Type.String(), eventType: Type.String(), status: Type.String(), attempts: Type.Integer(), nextAttemptAt: Type.Union([Type.String(), Type.Null()]), lastError: Type.Union([Type.String(), Type.Null()]), createdAt: Type.String() })),
});
