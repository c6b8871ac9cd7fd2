/**
 * The Workspace resource as the mock serves it, in the service's camelCase shape (README.md,
 * "Resources"). Every field the service documents is present in a response; the values it
 * leaves open (roles, categories, the theme) are plausible ones, not the service's.
 */

export type Visibility = 'organization' | 'private';

export const VISIBILITIES: readonly Visibility[] = ['organization', 'private'];

/** The palette's entries `primary`, `secondary`, … each have these four colours. */
export interface PaletteColour {
  main: string;
  light: string;
  dark: string;
  contrastText: string;
}

export interface Theme {
  palette: {
    mode: string;
    background: string;
    text: { primary: string; secondary: string; disabled: string };
    divider: string;
    primary: PaletteColour;
    secondary: PaletteColour;
    success: PaletteColour;
    annotation: PaletteColour;
    error: PaletteColour;
    info: PaletteColour;
    warning: PaletteColour;
  };
  typography: {
    fontFamily: string;
    fontSize: string;
    fontWeightRegular: string;
    fontWeightMedium: string;
    fontWeightBold: string;
  };
  borderRadius: number;
  fontUrl: string;
}

/** The organization's settings of the validation tool. */
export interface ValidationToolConfig {
  theme: Theme;
  hideActions: boolean;
  hideCollection: boolean;
  hideEditPages: boolean;
  hideExport: boolean;
  hideFilename: boolean;
  hideShowRawValues: boolean;
  hideReject: boolean;
  hideReparse: boolean;
  hideRunOcr: boolean;
  hideTags: boolean;
  hideWarnings: boolean;
  hideDocumentStatus: boolean;
  restrictDocumentSplitting: boolean;
  disableCurrencyFormatting: boolean;
  disableEditDocumentMetadata: boolean;
  disableManualAnnotationEditing: boolean;
}

/** The organization a workspace belongs to, nested in the workspace. */
export interface MockOrganization {
  identifier: string;
  name: string;
  userRole: string;
  avatar: string;
  /** A secret of the service; the mock makes a random one per organization. */
  resthookSignatureKey: string;
  isTrial: boolean;
  validationToolConfig: ValidationToolConfig;
  showCustomFieldCreation: boolean;
}

/** An extractor, as a workspace response nests it in its collections. */
export interface MockExtractor {
  identifier: string;
  name: string;
  namePlural: string;
  baseExtractor: {
    identifier: string;
    name: string;
    namePlural: string;
    validatable: boolean;
    isCustom: boolean;
    /** ISO 8601. */
    createdDt: string;
  };
  category: string;
  validatable: boolean;
  /** ISO 8601. */
  createdDt: string;
}

/** A collection in a workspace response. */
export interface MockCollection {
  identifier: string;
  name: string;
  extractor: MockExtractor;
  unvalidatedDocsCount: number;
  confirmedDocsCount: number;
}

/** A member of a workspace. */
export interface MockMember {
  id: number;
  name: string;
  username: string;
  email: string;
  avatar: string;
}

/** A workspace's document splitter in a response; an update names it by its identifier alone. */
export interface MockDocumentSplitter {
  identifier: string;
  name: string;
}

/** A workspace, as `GET /v3/workspaces/{identifier}` answers it. */
export interface MockWorkspace {
  identifier: string;
  organization: MockOrganization;
  name: string;
  visibility: Visibility;
  collections: MockCollection[];
  documentTypes: string[];
  rejectInvalidDocuments: boolean;
  rejectDuplicates: boolean | null;
  members: MockMember[];
  unvalidatedDocsCount: number;
  confirmedDocsCount: number;
  /** Read-only: the service generates it; PATCH cannot change it. */
  ingestEmail: string;
  whitelistIngestAddresses: string[] | null;
  documentSplitter: MockDocumentSplitter | null;
}

/** The fields of a WorkspaceUpdate, already validated, as the store applies them. */
export interface WorkspacePatch {
  name?: string;
  visibility?: Visibility;
  rejectInvalidDocuments?: boolean;
  rejectDuplicates?: boolean | null;
  documentTypes?: string[];
  whitelistIngestAddresses?: string[] | null;
  /** The splitter's identifier. */
  documentSplitter?: string;
}

/** What the document side of the mock needs to know about a workspace when it takes an upload. */
export interface WorkspaceSettings {
  rejectDuplicates: boolean | null;
  rejectInvalidDocuments: boolean;
  /** The splitter's identifier: a multi-page PDF is split into a child document per page. */
  documentSplitter?: string | null;
}
