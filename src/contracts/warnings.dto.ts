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
export const WarningListSchema = Type.Object({
  data: Type.Array(CollapseWarningSchema),
  detectors: Type.Record(
    Type.String(),
    Type.Object({ signal: Type.String(), enabled: Type.Boolean(), threshold: Type.Number(), severity: Type.String() }),
    { description: 'each detector as this job runs it: the defaults with the job’s collapse.rules applied (the dashboard draws kl_spike’s threshold on kl/update)' },
  ),
});
export type WarningListView = Static<typeof WarningListSchema>;

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
export type BacktestResultView = Static<typeof BacktestResultSchema>;
