import * as z from 'zod/mini';
import { integer, nonEmptyString } from '../config-fields.ts';
import { parseCustomIdentifier } from './custom-identifier.ts';
import { parseExpiryTime } from './expiry-time.ts';

/**
 * What a workspace's configuration says about its uploads: the `upload:` block, holding the
 * form fields of POST /v3/documents (docs/parsing-api.md, "Uploading a document") under their spec names, and
 * `trackCompletion`. It lives beside upload-fields.ts, the encoder that is its other half:
 * every value accepted here must encode to something the service takes.
 *
 * Absent means the service's default; null, where the spec allows it, means the same (the
 * field is not sent, so the workspace setting applies). `file`, `fileName` and `workspace`
 * are the gateway's to set; `url` is refused (the gateway uploads files) and so is the
 * deprecated `identifier`, so that neither is ever sent.
 */

/** Two lowercase letters: the ISO 3166-1 alpha-2 codes the service writes in lowercase. */
const countryCode = () =>
  z.string().check(z.regex(/^[a-z]{2}$/, { error: 'expected a lowercase two-letter country code, e.g. vn' }));

/** RegionBias: a country, countries or coordinates; sent as JSON text. */
const regionBiasSchema = z
  .strictObject({
    country: z.optional(countryCode()),
    countries: z.optional(z.array(countryCode())),
    squareCoordinates: z.optional(z.array(z.number()).check(z.minLength(1, { error: 'must not be empty' }))),
    strict: z.optional(z.boolean()),
  })
  .check(
    z.refine((bias) => Object.keys(bias).some((key) => key !== 'strict'), {
      error: 'give at least one of country, countries, squareCoordinates',
    }),
  );

/**
 * ICU's English language names: a code it cannot name is not an ISO 639 code. Made on the
 * first language checked: loading ICU's display names costs a process about 7 MiB, which a
 * configuration without `language` need not pay.
 */
let languageNames: Intl.DisplayNames | undefined;

function isLanguageName(code: string): boolean {
  languageNames ??= new Intl.DisplayNames(['en'], { type: 'language', fallback: 'none' });
  return languageNames.of(code) !== undefined;
}

/**
 * Codes withdrawn from ISO 639-1, which ICU still names (it maps them to their successors):
 * in → id (1989), iw → he, ji → yi (1989), jw → jv (2001), mo → ro (2008), sh (Serbo-Croatian,
 * deprecated in favour of sr, hr, bs).
 */
const withdrawnCodes: Readonly<Record<string, string>> = {
  in: 'id',
  iw: 'he',
  ji: 'yi',
  jw: 'jv',
  mo: 'ro',
  sh: 'sr, hr or bs',
};

/**
 * ISO 639-1 (two letters), except Chinese, which the service wants as `zh-cn` or `zh-tw`
 * (docs/parsing-api.md, "Uploading a document"). Written in any case, sent in lowercase.
 */
const languageSchema = z.pipe(
  z.string(),
  z.transform((text: string, ctx) => {
    const code = text.trim().toLowerCase();
    if (code === 'zh-cn' || code === 'zh-tw') return code;
    const current = withdrawnCodes[code];
    const problem =
      code === 'zh'
        ? 'for Chinese give zh-cn (simplified) or zh-tw (traditional)'
        : current
          ? `${code} was withdrawn from ISO 639-1; give ${current}`
          : !/^[a-z]{2}$/.test(code) || !isLanguageName(code)
            ? `expected an ISO 639-1 language code (en, de, vi) or zh-cn/zh-tw, got ${JSON.stringify(text)}`
            : undefined;
    if (problem !== undefined) ctx.issues.push({ code: 'custom', message: problem, input: text });
    return code;
  }),
);

const customIdentifierSchema = nonEmptyString().check(
  z.superRefine((template, ctx) => {
    const parsed = parseCustomIdentifier(template);
    if (!parsed.ok) for (const message of parsed.problems) ctx.addIssue({ code: 'custom', message });
  }),
);

const expiryTimeSchema = z.string().check(
  z.superRefine((text, ctx) => {
    const parsed = parseExpiryTime(text);
    if (!parsed.ok) ctx.addIssue({ code: 'custom', message: parsed.problem });
  }),
);

const warningMessageSchema = z.strictObject({
  warningCode: nonEmptyString(),
  warningDetail: z.optional(z.string()),
});

export const uploadFieldsSchema = z
  .strictObject({
    // wait and rejectDuplicates first: the two most used, listed first in an unknown-key message.
    /** Answer only after parsing; the gateway sends false when absent (the service's default is true). */
    wait: z.optional(z.boolean()),
    /** Fail a duplicate of an existing document without spending credits; null: the workspace setting. */
    rejectDuplicates: z.optional(z.nullable(z.boolean())),
    /** Collection identifier; wins over the workspace-level `collection`. */
    collection: z.optional(nonEmptyString()),
    /** Document type identifier; wins over the workspace-level `documentType`. */
    documentType: z.optional(z.nullable(nonEmptyString())),
    /** A template: {messageId} {from} {subject} {attachmentIndex} {fileName} {queueId} {workspace}. */
    customIdentifier: z.optional(customIdentifierSchema),
    /** ISO 8601 date-time with a zone, or a duration after receipt (30d, 12h, 90m, 2w). */
    expiryTime: z.optional(z.nullable(expiryTimeSchema)),
    /** ISO 639-1; `zh-cn` or `zh-tw` for Chinese. */
    language: z.optional(z.nullable(languageSchema)),
    /** Sent as JSON text. */
    regionBias: z.optional(regionBiasSchema),
    lowPriority: z.optional(z.boolean()),
    /** Compact parse result; has an effect only with `wait: true`. */
    compact: z.optional(z.boolean()),
    /** Store nothing after parsing; only with `wait: true` (the service refuses it otherwise). */
    deleteAfterParse: z.optional(z.boolean()),
    enableValidationTool: z.optional(z.boolean()),
    /** true: OCR; false: text layer; null/absent: the service decides. */
    useOcr: z.optional(z.nullable(z.boolean())),
    /** Hint added to the language-model prompt for these documents. */
    llmHint: z.optional(z.nullable(nonEmptyString())),
    /** Document identifiers to take examples from; one form part each. */
    limitToExamples: z.optional(
      z.nullable(
        z
          .array(nonEmptyString())
          .check(z.minLength(1, { error: 'give at least one document identifier, or leave the key out' })),
      ),
    ),
    /** One form part each, holding the JSON text of `{warningCode, warningDetail}`. */
    warningMessages: z.optional(z.array(warningMessageSchema)),
    /** Not a form field: the query parameter `?snake_case=true`; answers then come in snake_case. */
    snake_case: z.optional(z.boolean()),
    identifier: z.optional(z.never({ error: 'is deprecated and never sent; use customIdentifier' })),
    url: z.optional(
      z.never({ error: 'cannot be configured: the gateway uploads the attachment as the file part' }),
    ),
  })
  .check(
    z.superRefine(
      (fields, ctx) => {
        if (fields.deleteAfterParse === true && fields.wait !== true) {
          ctx.addIssue({
            code: 'custom',
            path: ['deleteAfterParse'],
            message:
              'needs wait: true (the service refuses deleteAfterParse without it, and the gateway sends wait: false unless told)',
          });
        }
      },
      // Also when another field is wrong, so that every problem is listed at once.
      { when: ({ value }) => typeof value === 'object' && value !== null },
    ),
  );

export type UploadFieldsConfig = z.output<typeof uploadFieldsSchema>;

/** Milliseconds in a day. */
const DAY_MS = 86_400_000;

/** The fallback poll's first delay when the service pushes the outcome: 1 min. */
const RESTHOOK_FIRST_DELAY = 60_000;

/**
 * Completion tracking: after an upload answered before parsing finished (`wait: false`),
 * learn the parse outcome. `via: poll` polls GET /v3/documents/{identifier} with doubling
 * intervals until the document is ready; `via: resthook` subscribes to the service's parse
 * events and polls only as the fallback for a document no event settled, from `firstDelay`
 * (default 60000 then). `true` takes every default; `false` or absent turns it off.
 */
const completionPolicyFields = z.strictObject(
  {
    /** poll (default): ask until ready; resthook: the service pushes the outcome, polling is the fallback. */
    via: z._default(z.enum(['poll', 'resthook'], { error: 'expected poll or resthook' }), 'poll'),
    /** Milliseconds from the upload to the first poll; doubles after each poll. Default 5000 (resthook: 60000). */
    firstDelay: z.optional(integer(100, DAY_MS)),
    /** Largest interval between polls, in milliseconds; default 300000 (5 min). */
    maxDelay: z._default(integer(100, DAY_MS), 300_000),
    /** Polls per document before giving up; default 300 (24 h at the largest interval). */
    maxPolls: z._default(integer(1, 100_000), 300),
    /** Milliseconds from the upload after which polling gives up; default 86400000 (24 h). */
    maxTime: z._default(integer(1_000, 30 * DAY_MS), DAY_MS),
  },
  {
    error: (issue) =>
      issue.code === 'invalid_type'
        ? 'expected true, false, or a mapping of via, firstDelay, maxDelay, maxPolls, maxTime'
        : undefined,
  },
);

const completionPolicySchema = z.pipe(
  completionPolicyFields,
  z.transform((fields: z.output<typeof completionPolicyFields>, ctx) => {
    const firstDelay = fields.firstDelay ?? (fields.via === 'resthook' ? RESTHOOK_FIRST_DELAY : 5_000);
    const policy = { ...fields, firstDelay };
    if (policy.maxDelay < firstDelay) {
      ctx.issues.push({
        code: 'custom',
        message: 'maxDelay must not be below firstDelay',
        input: fields,
        path: ['maxDelay'],
      });
    }
    // A first poll after the deadline would be the only one, and late: refuse it at load.
    if (policy.maxTime < firstDelay) {
      ctx.issues.push({
        code: 'custom',
        message: 'maxTime must not be below firstDelay',
        input: fields,
        path: ['maxTime'],
      });
    }
    return policy;
  }),
);

/**
 * `true` and `false` read as `{}` and null, then the policy. The transform is wrapped in
 * optional only so that the key's type is optional, as the policy's is: absent passes through
 * either way.
 */
export const trackCompletionSchema = z.pipe(
  z.optional(z.transform((value: unknown) => (value === true ? {} : value === false ? null : value))),
  z.optional(z.nullable(completionPolicySchema)),
);

export type CompletionPolicy = z.output<typeof completionPolicySchema>;
