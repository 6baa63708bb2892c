package app

// Close stops the health monitor and the route warmer, then the base app.
func (app *App) Close() error {
	app.closeOnce.Do(func() {
		if app.healthMonitor != nil {
			app.healthMonitor.Stop()
		}
		if app.routeWarmer != nil {
			app.routeWarmer.Stop()
		}
		app.closeErr = app.BaseApp.Close()
	})
	return app.closeErr
}
