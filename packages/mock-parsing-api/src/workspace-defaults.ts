import { randomBytes } from 'node:crypto';
import type {
  MockCollection,
  MockOrganization,
  PaletteColour,
  Theme,
  ValidationToolConfig,
} from './workspace-shape.ts';

/**
 * Plausible values for the parts of a Workspace a seed leaves out. The service does not
 * publish the allowed roles, categories or theme values (README.md, "What the mock decides
 * for itself"), so these are invented and only need the right types; nothing in the
 * gateway reads them.
 */

/** When the mock's invented extractors were "created"; a fixed date keeps responses stable. */
const CREATED_DT = '2024-01-15T09:30:00.000000Z';

const colour = (main: string, light: string, dark: string): PaletteColour => ({
  main,
  light,
  dark,
  contrastText: '#ffffff',
});

export function defaultTheme(): Theme {
  return {
    palette: {
      // `light` is the one value of `mode` the service's description gives.
      mode: 'light',
      background: '#ffffff',
      text: { primary: '#1a1a1a', secondary: '#5c5c5c', disabled: '#a3a3a3' },
      divider: '#e0e0e0',
      primary: colour('#3f51b5', '#757de8', '#002984'),
      secondary: colour('#f50057', '#ff5983', '#bb002f'),
      success: colour('#2e7d32', '#60ad5e', '#005005'),
      annotation: colour('#ffb300', '#ffe54c', '#c68400'),
      error: colour('#d32f2f', '#ff6659', '#9a0007'),
      info: colour('#0288d1', '#5eb8ff', '#005b9f'),
      warning: colour('#ed6c02', '#ff9d3f', '#b53d00'),
    },
    typography: {
      fontFamily: 'Inter, sans-serif',
      fontSize: '14px',
      fontWeightRegular: '400',
      fontWeightMedium: '500',
      fontWeightBold: '700',
    },
    borderRadius: 4,
    fontUrl: 'https://fonts.example.com/inter.css',
  };
}

export function defaultValidationToolConfig(): ValidationToolConfig {
  return {
    theme: defaultTheme(),
    hideActions: false,
    hideCollection: false,
    hideEditPages: false,
    hideExport: false,
    hideFilename: false,
    hideShowRawValues: false,
    hideReject: false,
    hideReparse: false,
    hideRunOcr: false,
    hideTags: false,
    hideWarnings: false,
    hideDocumentStatus: false,
    restrictDocumentSplitting: false,
    disableCurrencyFormatting: false,
    disableEditDocumentMetadata: false,
    disableManualAnnotationEditing: false,
  };
}

/** The organization of every seeded workspace that names none; one per mock instance. */
export function defaultOrganization(): MockOrganization {
  return {
    identifier: 'mock-organization',
    name: 'Mock Organization',
    userRole: 'admin',
    avatar: 'https://files.example.com/avatars/mock-organization.png?signature=mock',
    // Random per mock: a test that checks signatures must read it from the workspace.
    resthookSignatureKey: randomBytes(32).toString('hex'),
    isTrial: false,
    validationToolConfig: defaultValidationToolConfig(),
    showCustomFieldCreation: true,
  };
}

/** One invoice collection, so a workspace response has a collection with an extractor. */
export function defaultCollection(workspaceIdentifier: string): MockCollection {
  return collectionFor({ identifier: `${workspaceIdentifier}-invoices`, name: 'Invoices' });
}

export function collectionFor(seed: {
  identifier: string;
  name?: string | undefined;
  extractorName?: string | undefined;
  unvalidatedDocsCount?: number | undefined;
  confirmedDocsCount?: number | undefined;
}): MockCollection {
  const extractorName = seed.extractorName ?? 'invoice';
  return {
    identifier: seed.identifier,
    name: seed.name ?? seed.identifier,
    extractor: {
      identifier: extractorName,
      name: capitalise(extractorName),
      namePlural: `${capitalise(extractorName)}s`,
      baseExtractor: {
        identifier: extractorName,
        name: capitalise(extractorName),
        namePlural: `${capitalise(extractorName)}s`,
        validatable: true,
        isCustom: false,
        createdDt: CREATED_DT,
      },
      category: 'finance',
      validatable: true,
      createdDt: CREATED_DT,
    },
    unvalidatedDocsCount: seed.unvalidatedDocsCount ?? 0,
    confirmedDocsCount: seed.confirmedDocsCount ?? 0,
  };
}

/**
 * The address the service would generate for a workspace: derived from the identifier, so
 * it is stable across runs, in a reserved domain (RFC 6761 `.invalid`) nobody can mail.
 */
export function generatedIngestEmail(identifier: string): string {
  const local = identifier.toLowerCase().replace(/[^a-z0-9._-]+/g, '-') || 'workspace';
  return `${local}@ingest.mock.invalid`;
}

/** A workspace's address after its `n`th refresh: the generated one with a fresh suffix. */
export function rotatedIngestEmail(identifier: string, n: number): string {
  const [local, domain] = generatedIngestEmail(identifier).split('@');
  return `${local}-r${n}@${domain}`;
}

function capitalise(word: string): string {
  return word.charAt(0).toUpperCase() + word.slice(1);
}
