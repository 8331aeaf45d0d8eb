import { analysisPanel } from '../analysis/analysisPanel';
import { contextPanel } from '../context/contextPanel';
import { costPanel } from '../cost/costView';
import { callsTablesPanel } from '../timeline/callsTable';
import { whatIfPanel } from '../whatIf/whatIfView';
import type { PanelFactory } from './panel';

/**
 * The inspector page's panels after the timeline (which the page makes itself: it is how
 * a call is brought into view), in the order their sections appear within each slot.
 * Adding a panel: its folder, and its factory here (CONTRIBUTING.md, "Adding a panel").
 */
export const PANELS: readonly PanelFactory[] = [analysisPanel, costPanel, contextPanel, whatIfPanel, callsTablesPanel];
