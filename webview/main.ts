/** The search view's entry point in the webview: its API from VS Code, then the view (search.ts). */
import { mountSearchView, type SearchApi } from './search';

declare function acquireVsCodeApi(): SearchApi;

mountSearchView(document, acquireVsCodeApi(), window);
