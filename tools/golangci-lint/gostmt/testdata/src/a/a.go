package a

func work() {}

func gopher() {}

func starts() {
	go work()   // want "go statement"
	go func() { // want "go statement"
		gopher()
	}()
	gopher()
	f := func() {
		go work() // want "go statement"
	}
	f()
}

type t struct{}

func (t) m(ch chan int) {
	go func(c chan int) { c <- 1 }(ch) // want "go statement"
	<-ch
}
